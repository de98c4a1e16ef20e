import { startCardStack } from '../support/card-stacks';
import type { CardStack } from '../support/card-stacks';
import { generatePledgeHistory } from '../money/pledge-history';
import { runPledgeCase } from '../money/pledge-driver';
import { runSeed } from '../money/rng';
import { CaseTally } from '../money/case-tally';

/**
 * The money model of monthly and weekly giving (issue 26): generated pledge histories (periods,
 * declines and recoveries, cards that ask for authentication, donors who pay or not, pauses,
 * cancellations, amount changes, actions fired twice, worker kills, resets) played on the real
 * stack and compared with the reference model (test/money/pledge-history.ts), on the simulator
 * and on Stripe's stand-in. `PLEDGE_MONEY_PROVIDERS` (simulator,stripe), `PLEDGE_MONEY_CASES`
 * (per provider; 6 by default), `PLEDGE_MONEY_SEED` replays a run, `PLEDGE_MONEY_CASE` some of
 * its cases, `PLEDGE_MONEY_CONCURRENCY` how many run at once (6). The simulator's cases
 * alternate between a card and a QR code (which asks the donor every period).
 */
const PROVIDERS = (process.env.PLEDGE_MONEY_PROVIDERS ?? 'simulator,stripe')
  .split(',')
  .map((name) => name.trim())
  .filter((name): name is 'simulator' | 'stripe' => name === 'simulator' || name === 'stripe');
const CASES = Number(process.env.PLEDGE_MONEY_CASES ?? 6);
const CONCURRENCY = Number(process.env.PLEDGE_MONEY_CONCURRENCY ?? 6);
const ONLY = process.env.PLEDGE_MONEY_CASE?.split(',').map(Number);
const SEED = runSeed(process.env.PLEDGE_MONEY_SEED);

process.stdout.write(
  `\npledge money model: seed ${SEED}, providers ${PROVIDERS.join(',')} ` +
    `(replay: PLEDGE_MONEY_SEED=${SEED} PLEDGE_MONEY_PROVIDERS=<name> PLEDGE_MONEY_CASE=<index>)\n`,
);

const batches: number[][] = [];
const indices = Array.from({ length: CASES }, (_, i) => i).filter(
  (i) => ONLY === undefined || ONLY.includes(i),
);
for (let i = 0; i < indices.length; i += CONCURRENCY) {
  batches.push(indices.slice(i, i + CONCURRENCY));
}
const tally = new CaseTally();

afterAll(() => {
  process.stdout.write(`\n${tally.summary('pledge money model', SEED)}\n`);
});

describe.each(PROVIDERS)('pledge money model: %s', (provider) => {
  let card: CardStack;

  beforeAll(async () => {
    card = await startCardStack(provider, `pledge-model-${provider}`, {
      autoPayMs: -1,
      paymentTimeoutSeconds: 3,
      env: { PLEDGE_RETRY_DELAYS: '1s,1s', PAYMENT_SETTLE_HORIZON_SECONDS: '3' },
    });
  });
  afterAll(async () => {
    await card.stop();
  });

  it.each(batches.map((batch) => [batch[0], batch.at(-1), batch] as const))(
    'cases %i–%i equal the model',
    async (_first, _last, batch) => {
      const started = Date.now();
      const settled = await Promise.allSettled(
        batch.map((index) =>
          runPledgeCase(
            card,
            generatePledgeHistory(SEED, index),
            provider === 'simulator' && index % 2 === 1 ? 'qris' : 'card',
          ),
        ),
      );
      // A case that threw is a case that differs: its error is its report.
      const results = settled.map((outcome, i) =>
        outcome.status === 'fulfilled'
          ? outcome.value
          : {
              problems: ['the case threw'],
              report: `case ${batch[i] ?? '?'}: ${String(outcome.reason)}`,
            },
      );
      tally.check(
        provider,
        results,
        started,
        `${provider} pledge cases differ from the model (PLEDGE_MONEY_SEED=${SEED} ` +
          `PLEDGE_MONEY_PROVIDERS=${provider} PLEDGE_MONEY_CASES=${CASES} PLEDGE_MONEY_CASE=<index>)`,
      );
    },
    600_000,
  );
});
