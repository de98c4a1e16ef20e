import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { CampaignRepository } from '../src/campaigns/campaign-repository';
import { createDatabase } from '../src/db/database';
import type { Db } from '../src/db/database';
import { median, percentiles, runDonors } from './spike-load';
import type { Accepted } from './spike-load';
import { verifyExactlyOnce } from './spike-checks';
import { startSpikeStack, SPIKE_CLIENT } from './spike-stack';

/**
 * `npm run bench:hot-campaign`: one public campaign's rush against the same load spread over
 * many campaigns, on the stack `npm start` runs. Rounds alternate (many, one, many, one, many)
 * and the ratio is the median confirmed rate of one campaign over that of many: whatever
 * serializes every confirmation of one campaign (its total row) shows as a ratio below 1.
 * Every round checks each confirmation once and progress equal to the ledger.
 *
 * HOT_DONORS (50), HOT_SECONDS (20 per round), HOT_CAMPAIGNS (64), HOT_ROUNDS (5),
 * HOT_AUTO_PAY_MS (200); WORKER_*, EARLY_RETURN_* and *_PROCESSES pass through to the stack.
 */
const env = process.env;
const DONORS = Number(env.HOT_DONORS ?? 50);
const SECONDS = Number(env.HOT_SECONDS ?? 20);
const CAMPAIGNS = Number(env.HOT_CAMPAIGNS ?? 64);
const ROUNDS = Number(env.HOT_ROUNDS ?? 5);
const AUTO_PAY_MS = Number(env.HOT_AUTO_PAY_MS ?? 200);
const CONFIRM_TIMEOUT_MS = 180_000;

const say = (line = '') => process.stdout.write(`${line}\n`);

interface Round {
  campaigns: number;
  accepted: number;
  confirmedPerSecond: number;
  p99ToAcceptedMs: number;
  problems: string[];
}

async function main(): Promise<void> {
  say(`hot campaign: ${DONORS} donors, ${SECONDS} s a round, 1 against ${CAMPAIGNS} campaigns`);
  const stack = await startSpikeStack(AUTO_PAY_MS);
  const db = createDatabase({ connectionString: stack.databaseUrl, max: 2 });
  const campaigns = new CampaignRepository(db);
  const rounds: Round[] = [];
  try {
    for (let i = 0; i < ROUNDS; i++) {
      const spread = i % 2 === 0 ? CAMPAIGNS : 1;
      const ids = await Promise.all(
        Array.from({ length: spread }, async () => {
          const id = `hot-${randomUUID().slice(0, 12)}`;
          await campaigns.create({ id, title: id, goalAmount: 1e12, currency: 'IDR' });
          return id;
        }),
      );
      const load = await runDonors(stack.apiUrl, ids, DONORS, SECONDS);
      const last = await lastConfirmation(db, load.accepted);
      const problems = [
        ...(await checkCampaigns(db, stack.apiUrl, ids, load.accepted)),
        ...(load.abandoned > 0 ? [`${load.abandoned} abandoned`] : []),
      ];
      rounds.push({
        campaigns: spread,
        accepted: load.accepted.length,
        confirmedPerSecond: load.accepted.length / ((last - load.startedAt) / 1000),
        p99ToAcceptedMs: percentiles(load.accepted.map((a) => a.toAcceptedMs)).p99,
        problems,
      });
      say(`round ${i + 1}: ${spread} campaign(s), ${load.accepted.length} accepted`);
    }
  } finally {
    await stack.stop();
    await db.destroy();
  }
  report(rounds);
  if (rounds.some((r) => r.problems.length > 0)) process.exitCode = 1;
}

/** When the last accepted donation was confirmed (Postgres' clock), waiting for all of them. */
async function lastConfirmation(db: Db, accepted: readonly Accepted[]): Promise<number> {
  const ids = accepted.map((a) => a.id);
  const deadline = Date.now() + CONFIRM_TIMEOUT_MS;
  for (;;) {
    const row = await db
      .selectFrom('donations')
      .select((eb) => [eb.fn.countAll<string>().as('n'), eb.fn.max('confirmed_at').as('last')])
      .where('id', 'in', ids)
      .where('status', '=', 'CONFIRMED')
      .executeTakeFirstOrThrow();
    if (Number(row.n) >= ids.length || Date.now() > deadline) {
      return row.last ? row.last.getTime() : Date.now();
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

/** Exactly once per campaign, and the progress the API serves equal to the ledger. */
async function checkCampaigns(
  db: Db,
  apiUrl: string,
  ids: readonly string[],
  accepted: readonly Accepted[],
): Promise<string[]> {
  const problems: string[] = [];
  for (const id of ids) {
    const mine = accepted.filter((a) => a.campaignId === id);
    problems.push(...(await verifyExactlyOnce(db, id, mine)));
    const ledger = await sql<{ amount: string }>`
      SELECT coalesce(sum(amount), 0)::text AS amount FROM donation_ledger WHERE campaign_id = ${id}
    `.execute(db);
    const response = await fetch(`${apiUrl}/v1/campaigns/${id}/progress`, {
      headers: { authorization: `Bearer ${SPIKE_CLIENT.secret}`, 'cache-control': 'no-cache' },
    });
    const progress = (await response.json()) as { confirmedAmount?: number };
    if (progress.confirmedAmount !== Number(ledger.rows[0]?.amount)) {
      problems.push(
        `${id}: progress ${progress.confirmedAmount}, ledger ${ledger.rows[0]?.amount}`,
      );
    }
  }
  return problems.slice(0, 10);
}

function report(rounds: readonly Round[]): void {
  const rate = (spread: (n: number) => boolean) =>
    median(rounds.filter((r) => spread(r.campaigns)).map((r) => r.confirmedPerSecond));
  const one = rate((n) => n === 1);
  const many = rate((n) => n > 1);
  say();
  say('## Hot campaign: one campaign against many, same stack, alternating rounds');
  say();
  say(
    '| round | campaigns | accepted | confirmed /s | p99 to 202 | exactly once, progress = ledger |',
  );
  say('|---|---|---|---|---|---|');
  rounds.forEach((r, i) => {
    const ok = r.problems.length === 0 ? 'yes' : `NO: ${r.problems.join('; ')}`;
    say(
      `| ${i + 1} | ${r.campaigns} | ${r.accepted} | ${r.confirmedPerSecond.toFixed(1)} | ` +
        `${Math.round(r.p99ToAcceptedMs)} ms | ${ok} |`,
    );
  });
  say();
  say(
    `One campaign ${one.toFixed(1)}/s against ${many.toFixed(1)}/s spread: ` +
      `**${(one / many).toFixed(2)}×** (target ≥ 0.9×).`,
  );
}

void main().catch((error: unknown) => {
  process.stderr.write(`${String(error instanceof Error ? (error.stack ?? error) : error)}\n`);
  process.exit(1);
});
