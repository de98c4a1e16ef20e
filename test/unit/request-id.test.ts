import type { IncomingMessage } from 'node:http';
import { createRequestIds } from '../../src/http/request-id';

const request = (id?: string) =>
  ({ headers: id === undefined ? {} : { 'x-request-id': id } }) as unknown as IncomingMessage;

describe('request ids', () => {
  it("keep a caller's sane X-Request-Id", () => {
    expect(createRequestIds()(request('order-42:retry.1'))).toBe('order-42:retry.1');
  });

  it('replace one that is empty, too long or carries other characters', () => {
    const next = createRequestIds();
    for (const offered of ['', 'x'.repeat(129), 'a b', 'a\nb', 'ü']) {
      expect(next(request(offered))).not.toBe(offered);
    }
  });

  it('are new for every request and differ between processes', () => {
    const first = createRequestIds();
    const second = createRequestIds();
    const ids = new Set<string>();
    for (let i = 0; i < 10_000; i++) {
      ids.add(first(request()));
      ids.add(second(request()));
    }
    expect(ids.size).toBe(20_000);
    // A generated id is itself acceptable, so a client that retries with it keeps it.
    const [generated = ''] = ids;
    expect(createRequestIds()(request(generated))).toBe(generated);
    for (const id of [...ids].slice(0, 3)) expect(id).toMatch(/^[0-9a-f]{16}-[0-9a-z]+$/);
  });
});
