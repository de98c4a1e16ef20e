import { AppError } from '../../src/errors/error-catalogue';
import { deriveUuid, parseIdempotencyKey, scopedKey } from '../../src/idempotency/idempotency-key';

function codeOf(fn: () => unknown): string | undefined {
  try {
    fn();
    return undefined;
  } catch (error) {
    return error instanceof AppError ? error.code : 'other';
  }
}

describe('Idempotency-Key parsing', () => {
  it('accepts a bare token and the RFC 8941 quoted form as the same key', () => {
    expect(parseIdempotencyKey('abc-123')).toBe('abc-123');
    expect(parseIdempotencyKey('"abc-123"')).toBe('abc-123');
    expect(parseIdempotencyKey('"a\\"b\\\\c"')).toBe('a"b\\c');
  });

  it('accepts 255 characters and refuses 256', () => {
    expect(parseIdempotencyKey('k'.repeat(255))).toHaveLength(255);
    expect(codeOf(() => parseIdempotencyKey('k'.repeat(256)))).toBe('idempotency-key-invalid');
  });

  it.each([
    [undefined, 'idempotency-key-missing'],
    ['', 'idempotency-key-missing'],
    ['has space', 'idempotency-key-invalid'],
    ['caf\u00e9', 'idempotency-key-invalid'],
    ['"unterminated', 'idempotency-key-invalid'],
    ['""', 'idempotency-key-invalid'],
    ['"bad\\escape"', 'idempotency-key-invalid'],
    ['"inner"quote"', 'idempotency-key-invalid'],
    [['a', 'b'], 'idempotency-key-invalid'],
  ])('refuses %j with %s', (header, code) => {
    expect(codeOf(() => parseIdempotencyKey(header))).toBe(code);
  });
});

describe('scoped keys and derived ids', () => {
  const scope = { clientId: 'client-a', method: 'POST', route: '/v1/donations', key: 'k1' };

  it('scopes by client, so two clients with one key never meet', () => {
    expect(scopedKey(scope)).not.toBe(scopedKey({ ...scope, clientId: 'client-b' }));
    expect(deriveUuid(scope)).not.toBe(deriveUuid({ ...scope, clientId: 'client-b' }));
  });

  it('derives the same RFC 9562 version-8 UUID every time', () => {
    const id = deriveUuid(scope);
    expect(deriveUuid({ ...scope })).toBe(id);
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  });
});
