/**
 * Appends a hook to a route's own list, as found in `onRoute` (absent, one function or an
 * array). Plugins attach their hooks per route, at registration, so routes that do not need
 * them pay nothing and the hooks that run already know their route.
 */
export function withHook<T>(existing: T | T[] | undefined, hook: NoInfer<T>): T[] {
  if (existing === undefined) return [hook];
  return Array.isArray(existing) ? [...existing, hook] : [existing, hook];
}

/** Puts a hook before the route's own (e.g. a refusal that should cost nothing else first). */
export function withFirstHook<T>(existing: T | T[] | undefined, hook: NoInfer<T>): T[] {
  if (existing === undefined) return [hook];
  return Array.isArray(existing) ? [hook, ...existing] : [hook, existing];
}
