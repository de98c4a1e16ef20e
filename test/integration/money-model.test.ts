import type { DriverContext } from '../money/driver-context';
import type { ProviderProfile } from '../money/history';
import { generateHistory, runSeed } from '../money/history-generator';
import { runCase } from '../money/money-driver';
import { startMoneyStack } from '../money/money-stacks';
import { CaseTally } from '../money/case-tally';

/**
 * The model-based test of the money (issues 12 and 22): generated provider histories driven
 * through the real stack, each compared with the reference model, on every provider: the
 * simulator, and galang's Stripe, Midtrans and Xendit adapters on loopback stand-ins
 * (test/support/standins). `MONEY_PROVIDERS` (default: all four) picks them; `MONEY_CASES`
 * sets the count per provider (default 16 on the simulator, 4 on each stand-in), `MONEY_SEED`
 * replays a run, `MONEY_CASE` some of its cases (`3` or `3,17`), `MONEY_CONCURRENCY` how many
 * run at once; `MONEY_CASES=500 npm run test:money` is the long run. A provider's cases
 * alternate between its profiles by index (the simulator's QRIS, verified QRIS and virtual
 * account, Stripe's two endpoint versions, Midtrans' QRIS and Mandiri Bill). Every profile
 * runs in the plain `npm test` too.
 */
const PROFILES: Record<string, readonly ProviderProfile[]> = {
  simulator: ['simulator', 'simulator-verify', 'simulator-va'],
  stripe: ['stripe', 'stripe-legacy'],
  midtrans: ['midtrans', 'midtrans-echannel'],
  xendit: ['xendit'],
};
const PROVIDERS = (process.env.MONEY_PROVIDERS ?? 'simulator,stripe,midtrans,xendit')
  .split(',')
  .map((name) => name.trim())
  .filter((name) => name !== '');
for (const name of PROVIDERS) {
  if (!Object.hasOwn(PROFILES, name)) throw new Error(`MONEY_PROVIDERS: no provider ${name}`);
}
const DEFAULT_CASES: Record<string, number> = { simulator: 16 };
const cases = (provider: string) => Number(process.env.MONEY_CASES ?? DEFAULT_CASES[provider] ?? 4);
const CONCURRENCY = Number(process.env.MONEY_CONCURRENCY ?? 8);
const ONLY = process.env.MONEY_CASE?.split(',').map(Number);
const SEED = runSeed(process.env.MONEY_SEED);
const PAYMENT_TIMEOUT_SECONDS = 4;
// Wide enough that a stalled CI machine (7 s seen) still acts inside it; horizon cases wait it out.
const SETTLE_HORIZON_SECONDS = 12;

process.stdout.write(
  `\nmoney model: seed ${SEED}, providers ${PROVIDERS.join(',')} ` +
    `(replay: MONEY_SEED=${SEED} MONEY_PROVIDERS=<name> MONEY_CASES=<n> MONEY_CASE=<index>)\n`,
);

/** Case indices of one profile of a provider, in batches that run at once. */
function batches(provider: string, profile: number): number[][] {
  const profiles = PROFILES[provider] ?? [];
  const indices = Array.from({ length: cases(provider) }, (_, i) => i).filter(
    (i) => i % profiles.length === profile && (ONLY === undefined || ONLY.includes(i)),
  );
  const out: number[][] = [];
  for (let i = 0; i < indices.length; i += CONCURRENCY) out.push(indices.slice(i, i + CONCURRENCY));
  return out;
}

const tally = new CaseTally();

afterAll(() => {
  process.stdout.write(`\n${tally.summary('money model', SEED)}\n`);
});

const runs = PROVIDERS.flatMap((provider) =>
  (PROFILES[provider] ?? [])
    .map((profile, i) => [provider, profile, i] as const)
    .filter(([, , i]) => batches(provider, i).length > 0),
);

describe.each(runs)('money model: %s (%s)', (provider, profile, i) => {
  let ctx: DriverContext;
  let stop: () => Promise<void>;

  beforeAll(async () => {
    ({ ctx, stop } = await startMoneyStack(profile, {
      paymentTimeoutSeconds: PAYMENT_TIMEOUT_SECONDS,
      settleHorizonSeconds: SETTLE_HORIZON_SECONDS,
    }));
  });

  afterAll(async () => {
    await stop();
  });

  it.each(batches(provider, i).map((batch) => [batch[0], batch.at(-1), batch] as const))(
    'cases %i–%i equal the model',
    async (_first, _last, batch) => {
      const started = Date.now();
      const results = await Promise.all(
        batch.map((index) => runCase(ctx, generateHistory(SEED, index, profile))),
      );
      tally.check(
        provider,
        results,
        started,
        `${profile} cases differ from the model ` +
          `(seed ${SEED}; one case: MONEY_SEED=${SEED} MONEY_PROVIDERS=${provider} ` +
          `MONEY_CASES=${cases(provider)} MONEY_CASE=<index>)`,
      );
    },
    // A case waits for deadlines, horizons and resets' reruns; a batch runs its cases at once.
    300_000,
  );
});
