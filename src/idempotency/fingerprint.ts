import { createHash } from 'node:crypto';

/**
 * SHA-256 over a canonical form of a parsed JSON body: object keys sorted, strings NFC-normalized,
 * numbers in their shortest round-trip form (so `1e3`, `1000` and `1000.0` agree), whitespace
 * irrelevant. Two requests that mean the same thing have the same fingerprint.
 */
export function fingerprint(body: unknown): string {
  return createHash('sha256').update(canonicalJson(body)).digest('base64url');
}

export function canonicalJson(value: unknown): string {
  if (value === null || value === undefined) return 'null';
  switch (typeof value) {
    case 'string':
      return JSON.stringify(value.normalize('NFC'));
    case 'number':
      if (!Number.isFinite(value)) throw new TypeError('Non-finite number in body');
      return JSON.stringify(Object.is(value, -0) ? 0 : value);
    case 'boolean':
      return value ? 'true' : 'false';
    case 'object': {
      if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
      const entries = Object.entries(value as Record<string, unknown>)
        .filter(([, v]) => v !== undefined)
        .map(([k, v]) => [k.normalize('NFC'), v] as const)
        .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
      return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
    }
    default:
      throw new TypeError(`Cannot fingerprint a ${typeof value}`);
  }
}
