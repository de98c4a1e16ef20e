import { randomUUID } from 'node:crypto';
import os from 'node:os';
import autocannon from 'autocannon';
import { DEV_SIMULATOR_SECRET } from '../src/config/config';
import { signStandardWebhook } from '../src/providers/standard-webhooks';
import globalSetup from '../test/support/global-setup';
import globalTeardown from '../test/support/global-teardown';
import { postDonation } from '../test/support/donations';
import { createCampaign, donationBody, eventually, startStack } from '../test/support/stack';
import '../test/support/quiet-temporal';
import { webhooksUnderFlood } from './webhook-flood';

/**
 * `npm run bench:webhooks`: webhook intake latency under load, on the real stack (Postgres,
 * Temporal dev server, worker, API). Every request is a distinct, correctly signed settlement
 * for a distinct donation whose workflow is waiting, so each one is verified, recorded in the
 * inbox and signalled to its workflow; a second run replays them all as duplicates.
 * Target: p99 under 1 s. Prints markdown for docs/benchmarks.md.
 */
const DONATIONS = Number(process.env.BENCH_DONATIONS ?? 1_000);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50);

async function main(): Promise<void> {
  await globalSetup();
  const stack = await startStack({ autoPayMs: -1, paymentTimeoutSeconds: 3_600 });
  try {
    const campaignId = await createCampaign(stack.db, { goalAmount: 1_000_000_000 });
    const prefix = `bench-${Date.now()}`;
    let next = 0;
    const started = Date.now();
    await Promise.all(
      Array.from({ length: 20 }, async () => {
        while (next < DONATIONS) {
          const i = next++;
          const response = await postDonation(
            stack.apiUrl,
            `${prefix}-${i}`,
            donationBody(campaignId),
          );
          if (response.status !== 202) throw new Error(`donation ${i}: ${response.status}`);
        }
      }),
    );
    const setupSeconds = (Date.now() - started) / 1000;
    const payments = [...Array(DONATIONS).keys()].map((i) => {
      const id = `msg_${randomUUID()}`;
      const body = JSON.stringify({
        type: 'payment.updated',
        data: {
          id: `sim_${i}`,
          reference: '',
          status: 'settled',
          amount: 50_000,
          currency: 'IDR',
          occurred_at: new Date().toISOString(),
        },
      });
      return { id, body };
    });
    // Point each notification at a real donation.
    const donations = await stack.db
      .selectFrom('donations')
      .select('id')
      .where('campaign_id', '=', campaignId)
      .execute();
    donations.forEach((d, i) => {
      const payment = payments[i];
      if (payment) payment.body = payment.body.replace('"reference":""', `"reference":"${d.id}"`);
    });

    const run = async (label: string) => {
      let i = 0;
      const result = await autocannon({
        url: `${stack.apiUrl}/v1/webhooks/simulator`,
        connections: CONNECTIONS,
        amount: DONATIONS,
        requests: [
          {
            method: 'POST',
            setupRequest: (request) => {
              const payment = payments[i++ % payments.length] ?? { id: 'x', body: '{}' };
              const timestamp = Math.floor(Date.now() / 1000);
              return {
                ...request,
                body: payment.body,
                headers: {
                  'content-type': 'application/json',
                  'webhook-id': payment.id,
                  'webhook-timestamp': String(timestamp),
                  'webhook-signature': signStandardWebhook(
                    DEV_SIMULATOR_SECRET,
                    payment.id,
                    timestamp,
                    payment.body,
                  ),
                },
              };
            },
          },
        ],
      });
      return `| ${label} | ${result.requests.total} | ${Math.round(result.requests.average)} | ${result.latency.p50} ms | ${result.latency.p99} ms | ${result.latency.max} ms | ${result.non2xx} |`;
    };
    const first = await run('new events (verify, record, signal)');
    const second = await run('the same events again (duplicates)');
    const drained = Date.now();
    const confirmedCount = async () =>
      (
        await stack.db
          .selectFrom('donations')
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .where('campaign_id', '=', campaignId)
          .where('status', '=', 'CONFIRMED')
          .executeTakeFirstOrThrow()
      ).n;
    await eventually(
      async () => ((await confirmedCount()) === DONATIONS ? true : undefined),
      300_000,
    );
    const drainSeconds = (Date.now() - drained) / 1000;
    const ledger = await stack.db
      .selectFrom('donation_ledger')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('campaign_id', '=', campaignId)
      .executeTakeFirstOrThrow();
    const confirmed = await stack.db
      .selectFrom('donations')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('campaign_id', '=', campaignId)
      .where('status', '=', 'CONFIRMED')
      .executeTakeFirstOrThrow();

    const lines = [
      '# Webhook intake benchmark',
      '',
      `Node ${process.version}, ${os.cpus().length} CPUs; API, worker, Temporal dev server, Postgres and the load generator (autocannon, ${CONNECTIONS} connections, in the API's process) share the machine. ${DONATIONS} donations waiting for payment, created in ${setupSeconds.toFixed(1)} s.`,
      '',
      '| run | requests | req/s | p50 | p99 | max | non-2xx |',
      '| --- | --- | --- | --- | --- | --- | --- |',
      first,
      second,
      '',
      `All ${confirmed.n} donations confirmed ${drainSeconds.toFixed(1)} s after the last answer (the worker catches up with the signals), with ${ledger.n} ledger entries. Target: p99 under 1 s.`,
    ];
    process.stdout.write(`${lines.join('\n')}\n`);
  } finally {
    await stack.stop();
  }
  try {
    process.stdout.write(`${(await webhooksUnderFlood()).join('\n')}\n`);
  } finally {
    await globalTeardown();
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`${String(error)}\n`);
  process.exit(1);
});
