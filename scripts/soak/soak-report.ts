import type { Log } from '../stack/commands';
import type { FaultKind } from './soak-chaos';
import type { SoakRecord } from './soak-donors';
import type { InvariantResult } from './soak-invariants';

export interface SoakReport {
  record: SoakRecord;
  loadSeconds: number;
  settleSeconds: number;
  /** Each kind: injected, and not recovered from. */
  faults: [FaultKind, number, number][];
  restarts: [string, number][];
  results: InvariantResult[];
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;
}

/** The soak's figures: the load it held, the faults it survived, the invariants' verdicts. */
export function printReport(say: Log, report: SoakReport): void {
  const { record } = report;
  const { counts } = record;
  const latencies = [...record.latenciesMs].sort((a, b) => a - b);
  const perMinute = (counts.donations / report.loadSeconds) * 60;
  say('');
  say(`== Load held over ${(report.loadSeconds / 60).toFixed(1)} min`);
  say(
    `donations          ${counts.donations} (${perMinute.toFixed(0)}/min), ${counts.retriesOfAKey} keys sent twice`,
  );
  say(
    `outcomes           ${counts.paid} paid, ${counts.declined} declined, ${counts.abandoned} abandoned`,
  );
  say(
    `refunds            ${counts.providerRefunds} at the provider, ${counts.operatorRefunds} by operators`,
  );
  say(
    `final answers      ${[...record.answers.entries()].map(([status, n]) => `${status}: ${n}`).join(', ')}`,
  );
  say(
    `every attempt      ${[...record.attempts.entries()].map(([status, n]) => `${status}: ${n}`).join(', ')}`,
  );
  say(
    `until answered     p50 ${percentile(latencies, 50)} ms, p95 ${percentile(latencies, 95)} ms, max ${latencies.at(-1) ?? 0} ms (retries through faults included)`,
  );
  say(`settled after load ${report.settleSeconds.toFixed(0)} s`);
  const errors = [...record.driverErrors.entries()].map(([name, n]) => `${name} ${n}`);
  say(
    `soak's own errors  ${errors.join(', ') || 'none'} (requests of the load that failed, retried by the next step)`,
  );
  say('== Faults');
  for (const [kind, n, lost] of report.faults) {
    say(`${String(n).padStart(4)}  ${kind}${lost > 0 ? ` (${lost} not recovered from)` : ''}`);
  }
  say(
    `restarts by the supervisor: ${
      report.restarts
        .filter(([, n]) => n > 0)
        .map(([name, n]) => `${name} ${n}`)
        .join(', ') || 'none'
    }`,
  );
  say('== Invariants');
  for (const result of report.results) {
    say(`${result.ok ? '✓' : '✗'} ${result.name}${result.ok ? '' : ` — ${result.detail}`}`);
  }
  const passed = report.results.filter((result) => result.ok).length;
  say(`soak: ${passed} passed, ${report.results.length - passed} failed`);
}
