import { ProgressCache } from '../../src/campaigns/progress-cache';
import { runOps } from '../../src/ops/cli';
import { buildOpsContext } from '../../src/ops/ops-context';
import type { Stack } from './stack';

/** Runs an ops CLI command in this process against the stack; returns its exit code and output. */
export async function ops(stack: Stack, ...argv: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runOps(
    argv,
    { out: (text) => out.push(text), err: (text) => err.push(text) },
    async () =>
      buildOpsContext({
        config: stack.config,
        db: stack.db,
        temporal: stack.temporal,
        progressCache: new ProgressCache(stack.redis, stack.config.progress),
        providers: stack.providers,
      }),
  );
  return { code, out: out.join('\n'), err: err.join('\n') };
}
