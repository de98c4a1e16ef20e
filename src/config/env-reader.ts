export type Env = Readonly<Record<string, string | undefined>>;

/**
 * Typed reads of environment variables that collect every problem instead of stopping at the
 * first, so a misconfigured deployment learns everything that is wrong in one boot.
 */
export class EnvReader {
  constructor(
    private readonly source: Env,
    private readonly problems: string[],
  ) {}

  private raw(name: string): string | undefined {
    const value = this.source[name]?.trim();
    return value === undefined || value === '' ? undefined : value;
  }

  string(name: string, fallback: string): string;
  string(name: string, fallback: string | undefined): string | undefined;
  string(name: string, fallback: string | undefined): string | undefined {
    const value = this.raw(name) ?? fallback;
    if (value === undefined) this.problems.push(`${name} is required`);
    return value;
  }

  optional(name: string): string | undefined {
    return this.raw(name);
  }

  /** A comma-separated list; several secrets are active at once while rotating. */
  list(name: string, fallback: string | undefined, optional = false): string[] {
    const value = this.raw(name) ?? fallback;
    if (value === undefined) {
      if (!optional) this.problems.push(`${name} is required`);
      return [];
    }
    return value
      .split(',')
      .map((item) => item.trim())
      .filter((item) => item.length > 0);
  }

  integer(name: string, fallback: number, min: number, max = Number.MAX_SAFE_INTEGER): number {
    const raw = this.raw(name);
    if (raw === undefined) return fallback;
    const value = Number(raw);
    if (!/^-?\d+$/.test(raw) || value < min || value > max) {
      this.problems.push(`${name} must be an integer between ${min} and ${max}, got "${raw}"`);
      return fallback;
    }
    return value;
  }

  /** `true`/`false` (or `1`/`0`). */
  boolean(name: string, fallback: boolean): boolean {
    const raw = this.raw(name);
    if (raw === undefined) return fallback;
    if (raw === 'true' || raw === '1') return true;
    if (raw === 'false' || raw === '0') return false;
    this.problems.push(`${name} must be true or false, got "${raw}"`);
    return fallback;
  }

  port(name: string, fallback: number): number {
    return this.integer(name, fallback, 0, 65_535);
  }

  url(name: string, fallback: string): string {
    const value = this.raw(name) ?? fallback;
    try {
      new URL(value);
    } catch {
      this.problems.push(`${name} must be a URL, got "${value}"`);
    }
    return value;
  }

  oneOf<T extends string>(name: string, allowed: readonly T[], fallback: T): T {
    const value = this.raw(name) ?? fallback;
    if (!(allowed as readonly string[]).includes(value)) {
      this.problems.push(`${name} must be one of ${allowed.join(', ')}, got "${value}"`);
      return fallback;
    }
    return value as T;
  }

  /**
   * Parses `id:secret,id:secret`; secrets shorter than 8 characters are refused. Unset and
   * `optional`: no keys, so the role is refused everywhere.
   */
  keyList(
    name: string,
    fallback: string | undefined,
    optional = false,
  ): ReadonlyMap<string, string> {
    const raw = this.raw(name) ?? fallback;
    const keys = new Map<string, string>();
    if (raw === undefined) {
      if (!optional) this.problems.push(`${name} is required (id:secret,id:secret)`);
      return keys;
    }
    for (const entry of raw.split(',')) {
      const [id, secret, ...rest] = entry.trim().split(':');
      if (!id || !secret || rest.length > 0 || !/^[A-Za-z0-9_.-]{1,64}$/.test(id)) {
        this.problems.push(`${name} entries must be id:secret with a [A-Za-z0-9_.-] id`);
      } else if (secret.length < 8) {
        this.problems.push(`${name}: the secret of "${id}" must have at least 8 characters`);
      } else if (keys.has(id)) {
        this.problems.push(`${name}: "${id}" is listed twice`);
      } else {
        keys.set(id, secret);
      }
    }
    return keys;
  }
}
