import os from 'node:os';
import pg from 'pg';
import { CampaignRepository } from '../src/campaigns/campaign-repository';
import { createDatabase } from '../src/db/database';
import { ensureDatabase, migrateToLatest } from '../src/db/migrate';
import { benchProgressAnswer } from './bench-servers';
import { mean, measureServer, startServer } from './measure';
import type { HttpResult } from './measure';

/**
 * `npm run bench:progress`: campaign progress reads against a bare Fastify route answering the
 * same JSON, in one run; then bursts of 1 000 concurrent cold requests for one campaign across
 * two API processes, counting the statements Postgres itself ran. Needs Postgres and Redis.
 * Prints markdown for docs/benchmarks.md.
 */
const env = process.env;
const SECONDS = Number(env.BENCH_SECONDS ?? 10);
const CONNECTIONS = Number(env.BENCH_CONNECTIONS ?? 50);
const BURST = Number(env.BENCH_BURST ?? 1_000);
const DATABASE_URL = env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/galang_bench';
const REDIS_URL = env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const serverEnv = {
  DATABASE_URL,
  REDIS_URL,
  REDIS_KEY_PREFIX: `galang-bench:${Date.now().toString(36)}:`,
  // Nothing but progress reads may reach the bench database while its transactions are counted.
  INBOX_REDELIVERY_INTERVAL_MS: '3600000',
};
const say = (line = '') => process.stdout.write(`${line}\n`);
const fmt = (n: number) => n.toLocaleString('en-US', { maximumFractionDigits: 0 });

async function routeBenchmark(campaignId: string): Promise<void> {
  say('## Cached progress reads vs a bare Fastify route returning the same JSON');
  say();
  const rounds = Number(env.BENCH_ROUNDS ?? 3);
  const kinds: [string, string, Record<string, string>][] = [];
  for (let round = 0; round < rounds; round++) {
    kinds.push(['bare', 'progress-bare', {}], ['galang', 'progress-full', serverEnv]);
  }
  kinds.push([
    'galang, Redis on every read',
    'progress-full',
    { ...serverEnv, PROGRESS_LOCAL_TTL_MS: '0' },
  ]);
  const rows: [string, HttpResult][] = [];
  for (const [label, kind, extra] of kinds) {
    const result = await measureServer(kind, extra, `/v1/campaigns/${campaignId}/progress`, {
      method: 'GET',
      headers: {},
      connections: CONNECTIONS,
      pipelining: 1,
      seconds: SECONDS,
    });
    rows.push([label, result]);
  }
  say('| server | req/s | p50 | p99 | non-2xx |');
  say('|---|---|---|---|---|');
  for (const [label, r] of rows) {
    say(`| ${label} | ${fmt(r.requestsPerSecond)} | ${r.p50} ms | ${r.p99} ms | ${r.non2xx} |`);
  }
  const rates = (label: string) =>
    rows.filter(([l]) => l === label).map(([, r]) => r.requestsPerSecond);
  say();
  say(
    `**Cached reads / bare route: ${(mean(rates('galang')) / mean(rates('bare'))).toFixed(2)}× of the means, ${(Math.max(...rates('galang')) / Math.max(...rates('bare'))).toFixed(2)}× of the best rounds** (target ≥ 0.75×; ${String(rounds)} alternating rounds; on a shared virtual machine a neighbour only ever lowers a round, so the best rounds are the steadier estimate of capacity).`,
  );
  say();
}

/**
 * Statements the bench database ran, as Postgres counts them: committed transactions less the
 * sessions opened (a new backend commits one transaction of its own while it starts).
 */
async function statements(admin: pg.Client, database: string): Promise<number> {
  const result = await admin.query<{ n: string }>(
    'SELECT (xact_commit - sessions)::text AS n FROM pg_stat_database WHERE datname = $1',
    [database],
  );
  return Number(result.rows[0]?.n ?? 0);
}

async function coldBurstBenchmark(campaignIds: string[], admin: pg.Client) {
  say(`## ${fmt(BURST)} concurrent cold requests for one campaign, across two API processes`);
  say();
  say('| burst | answers 200 | distinct bodies | statements Postgres ran |');
  say('|---|---|---|---|');
  const database = new URL(DATABASE_URL).pathname.slice(1);
  for (const [index, campaignId] of campaignIds.entries()) {
    const round = index + 1;
    const servers = [await startServer('progress-full', serverEnv)];
    servers.push(await startServer('progress-full', serverEnv));
    const before = await statements(admin, database);
    const responses = await Promise.all(
      Array.from({ length: BURST }, (_, i) =>
        fetch(`${servers[i % 2]?.url ?? ''}/v1/campaigns/${campaignId}/progress`),
      ),
    );
    const bodies = await Promise.all(responses.map((r) => r.text()));
    // A backend reports its counts when it exits, so the servers stop before the count is read.
    for (const server of servers) server.child.kill();
    await Promise.all(servers.map((s) => new Promise((resolve) => s.child.once('exit', resolve))));
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    const seen = (await statements(admin, database)) - before;
    const ok = responses.filter((r) => r.status === 200).length;
    say(`| ${round} | ${fmt(ok)} | ${new Set(bodies).size} | ${seen} |`);
  }
  say();
  say('Without the cache every request is one query: a burst would be 1 000 statements.');
  say();
}

async function main(): Promise<void> {
  say('# Campaign progress benchmark');
  say();
  say(
    `Node ${process.version}, ${os.cpus().length} × ${os.cpus()[0]?.model ?? 'cpu'}. autocannon: ${CONNECTIONS} connections, pipelining 1, ${SECONDS} s per run after a 2 s warm-up; servers run in their own process, with the default PROGRESS_LOCAL_TTL_MS (1 s) unless noted.`,
  );
  say();
  await ensureDatabase(DATABASE_URL);
  const db = createDatabase({ connectionString: DATABASE_URL, max: 2 });
  // Counting from another database, so the counting queries are not counted.
  const adminUrl = new URL(DATABASE_URL);
  adminUrl.pathname = '/postgres';
  const admin = new pg.Client({ connectionString: adminUrl.toString() });
  const cold = [1, 2, 3].map((round) => `bench-cold-${Date.now().toString(36)}-${String(round)}`);
  try {
    await migrateToLatest(db);
    const campaigns = new CampaignRepository(db);
    const { campaignId, goalAmount, confirmedAmount, donationCount } = benchProgressAnswer;
    await campaigns.create({ id: campaignId, title: 'Bench', goalAmount, currency: 'IDR' });
    await db
      .updateTable('campaign_total_shards')
      .set({ confirmed_amount: confirmedAmount, donation_count: donationCount })
      .where('campaign_id', '=', campaignId)
      .execute();
    for (const id of cold) {
      await campaigns.create({ id, title: id, goalAmount: 1e9, currency: 'IDR' });
    }
  } finally {
    // A backend reports its transaction counts when it exits: this one must have before the
    // bursts are counted.
    await db.destroy();
  }
  await admin.connect();
  try {
    await routeBenchmark(benchProgressAnswer.campaignId);
    await coldBurstBenchmark(cold, admin);
  } finally {
    await admin.end();
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`${String(error)}\n`);
  process.exit(1);
});
