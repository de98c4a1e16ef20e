import { DEV_SIMULATOR_SECRET } from '../../src/config/config';
import { DonationRepository } from '../../src/donations/donation-repository';
import { FollowUpWorkflows } from '../../src/donations/follow-up-workflows';
import { WebhookDelivery } from '../../src/webhooks/webhook-delivery';
import { WebhookInboxRepository } from '../../src/webhooks/webhook-inbox-repository';
import type { ProviderProfile } from '../money/history';
import { generateHistory, runSeed } from '../money/history-generator';
import type { DriverContext } from '../money/driver-context';
import { runCase } from '../money/money-driver';
import { WebhookRecorder } from '../money/webhook-recorder';
import { startStack } from '../support/stack';

/**
 * The model-based test of the money (issue 12): generated provider histories driven through
 * the real stack, each compared with the reference model. `MONEY_CASES` (default 16) sets the
 * count, `MONEY_SEED` replays a run, `MONEY_CASE` some of its cases (`3` or `3,17`),
 * `MONEY_CONCURRENCY` how many run at once; `MONEY_CASES=2000 npm run test:money` is the long
 * run.
 */
const CASES = Number(process.env.MONEY_CASES ?? 16);
const CONCURRENCY = Number(process.env.MONEY_CONCURRENCY ?? 8);
const ONLY = process.env.MONEY_CASE?.split(',').map(Number);
const SEED = runSeed(process.env.MONEY_SEED);
const PROFILES: ProviderProfile[] = ['simulator', 'simulator-verify'];
const PAYMENT_TIMEOUT_SECONDS = 4;
const SETTLE_HORIZON_SECONDS = 4;

process.stdout.write(
  `\nmoney model: seed ${SEED}, ${CASES} cases (replay: MONEY_SEED=${SEED} MONEY_CASES=${CASES})\n`,
);

/** Case indices of one profile, in batches that run at once. */
function batches(profile: number): number[][] {
  const indices = Array.from({ length: CASES }, (_, i) => i).filter(
    (i) => i % PROFILES.length === profile && (ONLY === undefined || ONLY.includes(i)),
  );
  const out: number[][] = [];
  for (let i = 0; i < indices.length; i += CONCURRENCY) out.push(indices.slice(i, i + CONCURRENCY));
  return out;
}

describe.each(
  PROFILES.map((profile, i) => [profile, i] as const).filter(([, i]) => batches(i).length > 0),
)('money model: %s', (profile, i) => {
  const profileBatches = batches(i);
  let ctx: DriverContext;
  let recorder: WebhookRecorder;
  let stop: () => Promise<void>;

  beforeAll(async () => {
    const stack = await startStack({
      autoPayMs: -1,
      paymentTimeoutSeconds: PAYMENT_TIMEOUT_SECONDS,
      verifyWithProvider: profile === 'simulator-verify',
      env: { PAYMENT_SETTLE_HORIZON_SECONDS: String(SETTLE_HORIZON_SECONDS) },
    });
    recorder = new WebhookRecorder(`${stack.apiUrl}/v1/webhooks/simulator`, DEV_SIMULATOR_SECRET);
    stack.simulator.webhookUrl = await recorder.listen();
    let restarting = Promise.resolve();
    const inbox = new WebhookInboxRepository(stack.db);
    ctx = {
      stack,
      recorder,
      delivery: new WebhookDelivery({
        inbox,
        donations: new DonationRepository(stack.db),
        providers: stack.providers,
        temporal: stack.temporal,
        followUps: new FollowUpWorkflows(stack.temporal, stack.config.temporal.taskQueue),
      }),
      paymentTimeoutSeconds: PAYMENT_TIMEOUT_SECONDS,
      settleHorizonSeconds: SETTLE_HORIZON_SECONDS,
      restartWorker() {
        restarting = restarting.then(() => stack.restartWorker());
        return restarting;
      },
    };
    stop = async () => {
      await stack.stop();
      await recorder.close();
    };
  });

  afterAll(async () => {
    await stop();
  });

  it.each(profileBatches.map((batch) => [batch[0], batch.at(-1), batch] as const))(
    'cases %i–%i equal the model',
    async (_first, _last, batch) => {
      const results = await Promise.all(
        batch.map((index) => runCase(ctx, generateHistory(SEED, index, profile))),
      );
      const failed = results.filter((r) => r.problems.length > 0);
      if (failed.length > 0) {
        throw new Error(
          [
            `${failed.length} of ${results.length} cases differ from the model (seed ${SEED}; ` +
              `one case: MONEY_SEED=${SEED} MONEY_CASES=${CASES} MONEY_CASE=<index>)`,
            ...failed.map((r) => r.report),
          ].join('\n\n'),
        );
      }
    },
    // A case waits for deadlines, horizons and resets' reruns; a batch runs its cases at once.
    300_000,
  );
});
