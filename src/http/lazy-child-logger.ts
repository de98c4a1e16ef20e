import type { FastifyServerOptions } from 'fastify';
import type { Bindings, ChildLoggerOptions, Logger } from 'pino';

const METHODS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace'] as const;

/**
 * Fastify gives every request a child logger bound to its id. Creating a pino child costs a
 * few microseconds, as much as the rest of a cached progress read, and most requests log
 * nothing at the level in force (the progress route logs at `warn`). This child is created on
 * the first line that would actually be written; until then a call only compares two numbers.
 */
export const lazyChildLoggerFactory = lazyChild as unknown as NonNullable<
  FastifyServerOptions['childLoggerFactory']
>;

function lazyChild(parent: Logger, bindings: Bindings, options: ChildLoggerOptions): Logger {
  // Fastify's null logger (logging disabled) is no pino instance and costs nothing anyway.
  if (typeof parent.levelVal !== 'number') return parent.child(bindings, options);
  let child: Logger | undefined;
  const real = (): Logger => (child ??= parent.child(bindings, options));
  // `silent` has no entry in `levels.values`: nothing passes it.
  const own =
    options.level === undefined
      ? parent.levelVal
      : (parent.levels.values[options.level] ?? Number.POSITIVE_INFINITY);
  const lazy: Record<string, unknown> = {
    get level() {
      return child?.level ?? options.level ?? parent.level;
    },
    set level(level: string) {
      real().level = level;
    },
    silent: () => undefined,
    child: (more: Bindings, moreOptions?: ChildLoggerOptions) => real().child(more, moreOptions),
  };
  for (const method of METHODS) {
    const value = parent.levels.values[method] ?? 0;
    lazy[method] = (...args: Parameters<Logger['info']>) => {
      if (value >= (child?.levelVal ?? own)) real()[method](...args);
    };
  }
  return lazy as unknown as Logger;
}
