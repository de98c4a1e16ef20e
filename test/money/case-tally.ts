/** One case's verdict: what differed from the model, and the case's story for the report. */
export interface CaseResult {
  problems: string[];
  report: string;
}

/**
 * Counts a model run's cases per provider (cases, those equal to the model, time), for the
 * line each run prints at its end, and fails a batch with the reports of the cases that differ.
 */
export class CaseTally {
  private readonly counts = new Map<string, { cases: number; matches: number; ms: number }>();

  /** Adds a batch; throws with `header` and the differing cases' reports when any differ. */
  check(provider: string, results: readonly CaseResult[], startedAt: number, header: string) {
    const failed = results.filter((result) => result.problems.length > 0);
    const t = this.counts.get(provider) ?? { cases: 0, matches: 0, ms: 0 };
    this.counts.set(provider, {
      cases: t.cases + results.length,
      matches: t.matches + results.length - failed.length,
      ms: t.ms + Date.now() - startedAt,
    });
    if (failed.length > 0) {
      throw new Error(
        [
          `${failed.length} of ${results.length} ${header}`,
          ...failed.map((result) => result.report),
        ].join('\n\n'),
      );
    }
  }

  /** One line per provider: `<label>: <provider>: n cases, m match the model, seed s, t s`. */
  summary(label: string, seed: number): string {
    return [...this.counts]
      .map(
        ([provider, t]) =>
          `${label}: ${provider}: ${t.cases} cases, ${t.matches} match the model, ` +
          `seed ${seed}, ${(t.ms / 1000).toFixed(0)} s`,
      )
      .join('\n');
  }
}
