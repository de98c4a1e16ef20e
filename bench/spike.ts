import { randomUUID } from 'node:crypto';
import { CampaignRepository } from '../src/campaigns/campaign-repository';
import { createDatabase } from '../src/db/database';
import { costBetween, CPU_KINDS, readCpu } from './cpu-meter';
import type { CpuCost } from './cpu-meter';
import { calibrate, median, percentiles, runDonors } from './spike-load';
import type { CalibrationResult, DonorsResult } from './spike-load';
import {
  measureDonationCosts,
  verifyExactlyOnce,
  waitForConfirmations,
  waitForReceiptsMailed,
} from './spike-checks';
import { startCalibrationWorker, startSpikeStack } from './spike-stack';

/**
 * `npm run bench:spike`: a campaign's rush against what Temporal allows on the same server.
 * Starts the stack as `npm start` does; for each level of in-flight work, rounds alternate
 * (yardstick, galang, yardstick, galang, yardstick): the yardstick is the donation's shape with
 * nothing of galang in it (bench/calibration/: update-with-start, two local activities, a
 * signal, one more local activity), galang is closed-loop donors on the real POST
 * /v1/donations with the simulator settling each payment. The ratio is galang's median
 * confirmed rate over the yardstick's median completed rate: one round decides nothing on a
 * machine whose yardstick alone swings by a fifth between runs. Each galang round is checked
 * (every accepted donation confirmed exactly once, its receipt mailed before the next round) and
 * charged CPU per process kind from `/proc`. Both sides are warmed up first, unrecorded. Ends
 * with a probe of what one donation costs. Prints markdown for docs/benchmarks.md.
 *
 * SPIKE_LEVELS (50,200), SPIKE_SECONDS (20 per round), SPIKE_WARM_UP_SECONDS (10 a side),
 * SPIKE_AUTO_PAY_MS (200), SPIKE_PROBE_DONATIONS (20), SPIKE_TEMPORAL_ADDRESS (a Temporal to use
 * instead of the dev server), SPIKE_DATABASE_URL; WORKER_*, EARLY_RETURN_*, API_PROCESSES and
 * WORKER_PROCESSES pass through to the stack.
 */
const env = process.env;
const LEVELS = (env.SPIKE_LEVELS ?? '50,200').split(',').filter(Boolean).map(Number);
const SECONDS = Number(env.SPIKE_SECONDS ?? 20);
const WARM_UP_SECONDS = Number(env.SPIKE_WARM_UP_SECONDS ?? 10);
const AUTO_PAY_MS = Number(env.SPIKE_AUTO_PAY_MS ?? 200);
const PROBE_DONATIONS = Number(env.SPIKE_PROBE_DONATIONS ?? 20);
const CONFIRM_TIMEOUT_MS = Number(env.SPIKE_CONFIRM_TIMEOUT_MS ?? 120_000);
const REDIS_URL = env.REDIS_URL ?? 'redis://127.0.0.1:6379';

const say = (line = '') => process.stdout.write(`${line}\n`);
const f1 = (n: number) => n.toFixed(1);
const ms = (n: number) => `${Math.round(n)} ms`;

interface YardstickRound {
  result: CalibrationResult;
  cpu: CpuCost;
}

interface GalangRound {
  load: DonorsResult;
  confirmedPerSecond: number;
  cpu: CpuCost;
  problems: string[];
}

interface LevelResult {
  donors: number;
  yardsticks: YardstickRound[];
  rounds: GalangRound[];
}

async function main(): Promise<void> {
  say(`Starting the stack as npm start does (levels ${LEVELS.join(', ')}, ${SECONDS} s a round)…`);
  const stack = await startSpikeStack(AUTO_PAY_MS);
  let stopped = false;
  const stopStack = async () => {
    if (stopped) return;
    stopped = true;
    await stack.stop();
  };
  const db = createDatabase({ connectionString: stack.databaseUrl, max: 2 });
  const yardstickQueue = `calibration-${randomUUID().slice(0, 8)}`;
  const yardstickWorker = await startCalibrationWorker(stack.temporalAddress, yardstickQueue);
  const cpuNow = () => readCpu(stack.pid, yardstickWorker.pid);
  const campaigns = new CampaignRepository(db);
  const newCampaign = async () => {
    const id = `spike-${randomUUID().slice(0, 12)}`;
    await campaigns.create({ id, title: id, goalAmount: 1e12, currency: 'IDR' });
    return id;
  };

  const yardstick = async (donors: number, seconds = SECONDS): Promise<YardstickRound> => {
    const before = cpuNow();
    const result = await calibrate(
      stack.temporalAddress,
      yardstickQueue,
      donors,
      seconds,
      'signalled',
    );
    return { result, cpu: costBetween(before, cpuNow(), result.completed) };
  };
  const galang = async (donors: number, seconds = SECONDS): Promise<GalangRound> => {
    const campaignId = await newCampaign();
    const before = cpuNow();
    const load = await runDonors(stack.apiUrl, [campaignId], donors, seconds);
    const confirmation = await waitForConfirmations(
      db,
      campaignId,
      load.accepted.length,
      CONFIRM_TIMEOUT_MS,
    );
    // The receipts are the round's too: mailed before the CPU is read and the next round runs.
    const mailed = await waitForReceiptsMailed(
      db,
      campaignId,
      confirmation.confirmed,
      CONFIRM_TIMEOUT_MS,
    );
    const cpu = costBetween(before, cpuNow(), load.accepted.length);
    const problems = await verifyExactlyOnce(db, campaignId, load.accepted);
    if (mailed < confirmation.confirmed) {
      problems.push(`${confirmation.confirmed - mailed} receipts not mailed`);
    }
    if (load.abandoned > 0) problems.push(`${load.abandoned} abandoned`);
    const elapsed = (confirmation.lastConfirmedAt - load.startedAt) / 1000;
    return { load, confirmedPerSecond: confirmation.confirmed / elapsed, cpu, problems };
  };

  const results: LevelResult[] = [];
  try {
    // Unrecorded, both sides alike: a cold first round measures JIT, pools and the receipts'
    // fonts being loaded, not a rate. Its donations are still checked.
    const warmUpLevel = LEVELS[0] ?? 50;
    say(`Warming up both sides, ${WARM_UP_SECONDS} s each at ${warmUpLevel} in flight…`);
    await yardstick(warmUpLevel, WARM_UP_SECONDS);
    const warmUp = await galang(warmUpLevel, WARM_UP_SECONDS);
    for (const problem of warmUp.problems) say(`- warm-up: ${problem}`);
    if (warmUp.problems.length > 0) process.exitCode = 1;
    for (const donors of LEVELS) {
      const level: LevelResult = { donors, yardsticks: [], rounds: [] };
      for (let round = 0; round < 5; round++) {
        if (round % 2 === 0) level.yardsticks.push(await yardstick(donors));
        else level.rounds.push(await galang(donors));
        say(`level ${donors}: round ${round + 1} of 5 done`);
      }
      results.push(level);
    }
    await yardstickWorker.stop();
    await stopStack();
    // The rounds first: a probe that fails does not take them with it.
    report(results);
    say('Probing what one donation costs, on a stack of its own…');
    const costs = await measureDonationCosts({
      db,
      databaseUrl: stack.databaseUrl,
      redisUrl: REDIS_URL,
      startStack: () => startSpikeStack(AUTO_PAY_MS),
      newCampaign,
      n: PROBE_DONATIONS,
    });
    say('## What one donation costs');
    say();
    say('```json');
    say(JSON.stringify(costs, null, 2));
    say('```');
  } finally {
    await stopStack().catch(() => undefined);
    await db.destroy();
  }
  if (results.some((l) => l.rounds.some((r) => r.problems.length > 0))) {
    say('FAILED: see the exactly-once column');
    process.exitCode = 1;
  }
}

function report(results: readonly LevelResult[]): void {
  say();
  say('## Spike: galang against the signalled yardstick, alternating rounds, same server');
  say();
  say(
    '| in flight | yardstick completed /s (rounds) | galang confirmed /s (rounds) | ratio of medians | p99 to 202 | PENDING | 5xx | exactly once |',
  );
  say('|---|---|---|---|---|---|---|---|');
  for (const level of results) {
    const ys = level.yardsticks.map((y) => y.result.completedPerSecond ?? 0);
    const gs = level.rounds.map((r) => r.confirmedPerSecond);
    const accepted = level.rounds.flatMap((r) => r.load.accepted);
    const p99 = percentiles(accepted.map((a) => a.toAcceptedMs)).p99;
    const pending = accepted.filter((a) => a.pending).length;
    const fivexx = level.rounds
      .flatMap((r) => [...r.load.statuses.entries()])
      .filter(([label]) => /\s(5\d\d|0)$/.test(label))
      .reduce((sum, [, count]) => sum + count, 0);
    const problems = level.rounds.flatMap((r) => r.problems);
    say(
      `| ${level.donors} | ${f1(median(ys))} (${ys.map(f1).join(', ')}) | ` +
        `${f1(median(gs))} (${gs.map(f1).join(', ')}) | **${(median(gs) / median(ys)).toFixed(2)}×** | ` +
        `${ms(p99)} | ${pending} of ${accepted.length} (${f1((100 * pending) / Math.max(1, accepted.length))} %) | ` +
        `${fivexx} | ${problems.length === 0 ? 'yes' : `NO: ${problems.slice(0, 5).join('; ')}`} |`,
    );
  }
  for (const level of results) {
    // Temporal alone on the same loop: how long its update-with-start takes at this level.
    say(
      `- ${level.donors} in flight: the yardstick's update-with-start, p50 ` +
        level.yardsticks.map((y) => ms(y.result.p50)).join(', ') +
        ', p99 ' +
        level.yardsticks.map((y) => ms(y.result.p99)).join(', '),
    );
    for (const failure of level.rounds.flatMap((r) => r.load.failures)) {
      say(`- ${level.donors} in flight, ${failure}`);
    }
  }
  say();
  say('CPU ms per donation (galang rounds) and per workflow (yardstick rounds), by process kind,');
  say(
    'over the round, its confirmations and its receipts\' mail; "busy" is the share of both cores',
  );
  say('in use.');
  say();
  say(`| in flight | round | ${CPU_KINDS.join(' | ')} | busy |`);
  say(`|---|---|${CPU_KINDS.map(() => '---').join('|')}|---|`);
  for (const level of results) {
    const row = (name: string, cost: CpuCost) =>
      say(
        `| ${level.donors} | ${name} | ${CPU_KINDS.map((k) => f1(cost.msPerUnit[k])).join(' | ')} | ` +
          `${Math.round(cost.busy * 100)} % |`,
      );
    level.yardsticks.forEach((y, i) => row(`yardstick ${i + 1}`, y.cpu));
    level.rounds.forEach((r, i) => row(`galang ${i + 1}`, r.cpu));
  }
  say();
  say('Targets (issue 23): confirmed ≥ 0.75× the yardstick at 50 and 200 in flight; p99 to the');
  say('202 ≤ 2 s at 50 and ≤ 3 s at 200; at most 10 % PENDING at 50; no 5xx; exactly once.');
  say();
}

void main().catch((error: unknown) => {
  process.stderr.write(`${String(error instanceof Error ? (error.stack ?? error) : error)}\n`);
  process.exit(1);
});
