import { runOps } from '../../src/ops/cli';
import { createOpsContext } from '../../src/runtime/create-services';
import type { Config } from '../../src/config/config';
import type { Stack } from './stack';

/** Runs an ops CLI command in this process against the stack; returns its exit code and output. */
export function ops(stack: Stack, ...argv: string[]) {
  return opsWith(stack, stack.config, ...argv);
}

/** {@link ops} under another config of the stack's (another OPS_ACTOR, say). */
export async function opsWith(stack: Stack, config: Config, ...argv: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runOps(
    argv,
    { out: (text) => out.push(text), err: (text) => err.push(text) },
    async () =>
      createOpsContext(config, {
        db: stack.db,
        redis: stack.redis,
        temporal: stack.temporal,
        providers: stack.providers,
      }),
  );
  return { code, out: out.join('\n'), err: err.join('\n') };
}
