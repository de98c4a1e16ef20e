import { ConfigError, loadConfig } from '../../src/config/config';
import type { Env } from '../../src/config/env-reader';

/** What the config refuses in `env`, as its error lists them; none when it loads. */
export function problemsOf(env: Env): readonly string[] {
  try {
    loadConfig(env);
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
  return [];
}
