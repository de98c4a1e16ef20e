import { randomUUID } from 'node:crypto';
import { CampaignRepository } from '../src/campaigns/campaign-repository';
import { createDatabase } from '../src/db/database';
import { calibrate, percentiles, runDonors } from './spike-load';
import type { CalibrationResult, DonorsResult } from './spike-load';
import { measureDonationCosts, verifyExactlyOnce, waitForConfirmations } from './spike-checks';
import { startCalibrationWorker, startSpikeStack } from './spike-stack';
import type { ProcessKind } from './spike-stack';

/**
 * `npm run bench:spike`: a campaign's rush against what Temporal allows on the same server.
 * Starts the stack as `npm start` does, then for each level of in-flight work: (1) the minimal
 * update-with-start workflow with two local activities (the calibration), (2) closed-loop
 * donors on galang's real POST /v1/donations, the simulator settling each payment; then checks
 * that every accepted donation was confirmed exactly once, and prints rates, latencies, the
 * status mix, CPU per donation and the ratios to the calibration. Ends with a probe of what one
 * donation costs (for docs/scaling.md). Prints markdown for docs/benchmarks.md.
 *
 * SPIKE_LEVELS (10,50,200), SPIKE_SECONDS (30 per level), SPIKE_CALIBRATION_SECONDS (as long),
 * SPIKE_AUTO_PAY_MS (200), SPIKE_PROBE_DONATIONS (20), SPIKE_TEMPORAL_ADDRESS (a Temporal to use
 * instead of the dev server), SPIKE_DATABASE_URL; WORKER_*, EARLY_RETURN_*, API_PROCESSES
 * and WORKER_PROCESSES pass through to the stack.
 */
const env = process.env;
const LEVELS = (env.SPIKE_LEVELS ?? '10,50,200').split(',').map(Number);
const SECONDS = Number(env.SPIKE_SECONDS ?? 30);
const CALIBRATION_SECONDS = Number(env.SPIKE_CALIBRATION_SECONDS ?? SECONDS);
const AUTO_PAY_MS = Number(env.SPIKE_AUTO_PAY_MS ?? 200);
const PROBE_DONATIONS = Number(env.SPIKE_PROBE_DONATIONS ?? 20);
const CONFIRM_TIMEOUT_MS = Number(env.SPIKE_CONFIRM_TIMEOUT_MS ?? 120_000);
const REDIS_URL = env.REDIS_URL ?? 'redis://127.0.0.1:6379';

const say = (line = '') => process.stdout.write(`${line}\n`);
const f1 = (n: number) => n.toFixed(1);
const ms = (n: number) => `${Math.round(n)} ms`;

interface LevelResult {
  donors: number;
  calibration: CalibrationResult;
  /** The donation's shape (start, signal, credit) with nothing of galang in it. */
  signalled: CalibrationResult;
  load: DonorsResult;
  acceptedPerSecond: number;
  confirmedPerSecond: number;
  cpuMsPerDonation: Record<ProcessKind, number>;
  problems: string[];
}

async function main(): Promise<void> {
  say(`Starting the stack as npm start does (levels ${LEVELS.join(', ')}, ${SECONDS} s each)…`);
  const stack = await startSpikeStack(AUTO_PAY_MS);
  let stopped = false;
  const stopStack = async () => {
    if (stopped) return;
    stopped = true;
    await stack.stop();
  };
  const db = createDatabase({ connectionString: stack.databaseUrl, max: 2 });
  const calibrationQueue = `calibration-${randomUUID().slice(0, 8)}`;
  const calibrationWorker = await startCalibrationWorker(stack.temporalAddress, calibrationQueue);
  const campaigns = new CampaignRepository(db);
  const newCampaign = async () => {
    const id = `spike-${randomUUID().slice(0, 12)}`;
    await campaigns.create({ id, title: id, goalAmount: 1e12, currency: 'IDR' });
    return id;
  };

  const results: LevelResult[] = [];
  let failed = false;
  try {
    for (const donors of LEVELS) {
      const calibration = await calibrate(
        stack.temporalAddress,
        calibrationQueue,
        donors,
        CALIBRATION_SECONDS,
      );
      const signalled = await calibrate(
        stack.temporalAddress,
        calibrationQueue,
        donors,
        CALIBRATION_SECONDS,
        'signalled',
      );
      const campaignId = await newCampaign();
      const cpuBefore = stack.cpu();
      const load = await runDonors(stack.apiUrl, campaignId, donors, SECONDS);
      const confirmation = await waitForConfirmations(
        db,
        campaignId,
        load.accepted.length,
        CONFIRM_TIMEOUT_MS,
      );
      const cpuAfter = stack.cpu();
      const problems = await verifyExactlyOnce(db, campaignId, load.accepted);
      if (problems.length > 0 || load.abandoned > 0) failed = true;
      const n = Math.max(1, load.accepted.length);
      const cpuMsPerDonation = Object.fromEntries(
        Object.entries(cpuAfter).map(([kind, seconds]) => [
          kind,
          ((seconds - cpuBefore[kind as ProcessKind]) * 1000) / n,
        ]),
      ) as Record<ProcessKind, number>;
      results.push({
        donors,
        calibration,
        signalled,
        load,
        acceptedPerSecond: load.accepted.length / load.seconds,
        confirmedPerSecond:
          confirmation.confirmed / ((confirmation.lastConfirmedAt - load.startedAt) / 1000),
        cpuMsPerDonation,
        problems,
      });
      say(`level ${donors}: done (${load.accepted.length} accepted)`);
    }
    await calibrationWorker.stop();
    await stopStack();
    say('Probing what one donation costs, on a stack of its own…');
    const costs = await measureDonationCosts({
      db,
      databaseUrl: stack.databaseUrl,
      redisUrl: REDIS_URL,
      startStack: () => startSpikeStack(AUTO_PAY_MS),
      newCampaign,
      n: PROBE_DONATIONS,
    });
    report(results);
    say('## What one donation costs');
    say();
    say('```json');
    say(JSON.stringify(costs, null, 2));
    say('```');
  } finally {
    await stopStack().catch(() => undefined);
    await db.destroy();
  }
  if (failed) {
    say('FAILED: see the exactly-once column');
    process.exitCode = 1;
  }
}

function report(results: LevelResult[]): void {
  say();
  say('## Spike: galang against the calibration, same server, same run');
  say();
  say(
    '| in flight | calibration /s | accepted /s | confirmed /s | accepted × | confirmed × | p50 to 202 | p99 to 202 | p99 to action | PENDING | status mix | 5xx | exactly once |',
  );
  say('|---|---|---|---|---|---|---|---|---|---|---|---|---|');
  for (const r of results) {
    const toAccepted = percentiles(r.load.accepted.map((a) => a.toAcceptedMs));
    const toAction = percentiles(
      r.load.accepted.flatMap((a) => (a.toActionMs === undefined ? [] : [a.toActionMs])),
    );
    const pending = r.load.accepted.filter((a) => a.pending).length;
    const mix = [...r.load.statuses.entries()]
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([status, count]) => `${status}: ${count}`)
      .join(', ');
    const fivexx = [...r.load.statuses.entries()]
      .filter(([label]) => /\s(5\d\d|0)$/.test(label))
      .reduce((sum, [, count]) => sum + count, 0);
    const cal = r.calibration.perSecond;
    say(
      `| ${r.donors} | ${f1(cal)} | ${f1(r.acceptedPerSecond)} | ${f1(r.confirmedPerSecond)} | ` +
        `${(r.acceptedPerSecond / cal).toFixed(2)} | ${(r.confirmedPerSecond / cal).toFixed(2)} | ` +
        `${ms(toAccepted.p50)} | ${ms(toAccepted.p99)} | ${ms(toAction.p99)} | ${pending} | ` +
        `${mix} | ${fivexx} | ${r.problems.length === 0 && r.load.abandoned === 0 ? 'yes' : `NO: ${[...r.problems, `${r.load.abandoned} abandoned`].join('; ')}`} |`,
    );
  }
  for (const r of results) {
    for (const failure of r.load.failures) say(`- ${r.donors} in flight, ${failure}`);
  }
  say();
  say('Calibration: p50/p99 of one update-with-start, errors; and the signalled yardstick, the');
  say("donation's shape with nothing of galang in it (start, then a signal and one more local");
  say('activity): started and completed per second, and galang against it.');
  say();
  say(
    '| in flight | completed | p50 | p99 | errors | signalled started /s | signalled completed /s | signalled / calibration | accepted / signalled | confirmed / signalled |',
  );
  say('|---|---|---|---|---|---|---|---|---|---|');
  for (const r of results) {
    const c = r.calibration;
    const s = r.signalled;
    const done = s.completedPerSecond ?? 0;
    say(
      `| ${c.inFlight} | ${c.completed} | ${ms(c.p50)} | ${ms(c.p99)} | ${c.errors + s.errors} | ` +
        `${f1(s.perSecond)} | ${f1(done)} | ${(done / c.perSecond).toFixed(2)} | ` +
        `${(r.acceptedPerSecond / s.perSecond).toFixed(2)} | ${(r.confirmedPerSecond / done).toFixed(2)} |`,
    );
  }
  say();
  say('CPU per accepted donation (ms), by process kind, over the level and its confirmations.');
  say();
  say('| in flight | api | worker | temporal | supervisor (simulator) |');
  say('|---|---|---|---|---|');
  for (const r of results) {
    const c = r.cpuMsPerDonation;
    say(
      `| ${r.donors} | ${f1(c.api)} | ${f1(c.worker)} | ${f1(c.temporal)} | ${f1(c.supervisor)} |`,
    );
  }
  say();
  const at50 = results.find((r) => r.donors === 50);
  say('Targets: accepted ≥ 0.7×, confirmed ≥ 0.5× the calibration at every level; p99 to the 202');
  say(
    `≤ 2 s at 50 (${at50 ? ms(percentiles(at50.load.accepted.map((a) => a.toAcceptedMs)).p99) : 'not run'}); no 5xx.`,
  );
  say();
}

void main().catch((error: unknown) => {
  process.stderr.write(`${String(error instanceof Error ? (error.stack ?? error) : error)}\n`);
  process.exit(1);
});
