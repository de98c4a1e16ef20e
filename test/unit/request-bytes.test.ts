import { hash } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Fastify from 'fastify';
import type { FastifyRequest } from 'fastify';
import { removeStoreFiles } from '../../src/idempotency/claims-location';
import { IdempotencyStore } from '../../src/idempotency/idempotency-store';
import { keepJsonBodies, rawDigestOf } from '../../src/idempotency/request-bytes';
import type { RequestBytes } from '../../src/idempotency/request-bytes';

const digest = (raw: string) => hash('sha256', raw, 'base64url');

describe('request bytes', () => {
  it('digests the raw body once', () => {
    const bytes: RequestBytes = { rawBody: '{"a":1}', rawDigest: undefined };
    expect(rawDigestOf(bytes)).toBe(digest('{"a":1}'));
    bytes.rawBody = 'changed';
    expect(rawDigestOf(bytes)).toBe(digest('{"a":1}'));
  });

  describe('the JSON body parser', () => {
    const held = new WeakMap<FastifyRequest, RequestBytes>();
    const app = Fastify();
    keepJsonBodies(app, (request) => held.get(request));
    app.addHook('onRequest', async (request) => {
      if (request.headers['x-keep'] === 'yes')
        held.set(request, { rawBody: undefined, rawDigest: undefined });
    });
    app.post('/', async (request) => ({
      body: request.body,
      raw: held.get(request)?.rawBody ?? null,
    }));
    afterAll(() => app.close());

    const post = (payload: string, keep = true) =>
      app.inject({
        method: 'POST',
        url: '/',
        headers: { 'content-type': 'application/json', ...(keep ? { 'x-keep': 'yes' } : {}) },
        payload,
      });

    it('keeps the exact text beside the parsed body', async () => {
      const text = '{ "b": 2,\n  "a": 1e3 }';
      const kept = await post(text);
      expect(kept.json()).toEqual({ body: { b: 2, a: 1000 }, raw: text });
      expect((await post(text, false)).json()).toEqual({ body: { b: 2, a: 1000 }, raw: null });
    });

    it('refuses what Fastify refuses: malformed JSON, an empty body, prototype poisoning', async () => {
      for (const payload of [
        '{"a":',
        '',
        '{"__proto__":{"admin":true}}',
        '{"constructor":{"prototype":{}}}',
      ]) {
        for (const keep of [true, false]) {
          const answer = await post(payload, keep);
          expect({ payload, status: answer.statusCode }).toEqual({ payload, status: 400 });
        }
      }
    });
  });
});

describe('bytes remembered beside a kept answer', () => {
  const response = { statusCode: 202, headers: {}, body: '{}' };
  let dir: string;
  let store: IdempotencyStore;

  beforeEach(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'galang-bytes-'));
    store = new IdempotencyStore({ path: dir, ttlSeconds: 60 });
  });
  afterEach(async () => {
    await store.close();
    removeStoreFiles(dir);
  });

  const completed = async (key: string) => {
    const claim = await store.claim(key, 'fp', digest('{}'));
    if (claim.outcome !== 'claimed') throw new Error('not claimed');
    await store.complete(key, claim.claimId, response);
    expect(store.get(key)?.status).toBe('COMPLETED');
  };

  it('remembers small bodies for a kept answer only', async () => {
    await completed('k');
    expect(store.knownBytes('k')).toBeUndefined();
    store.rememberBytes('k', '{}');
    expect(store.knownBytes('k')).toBe('{}');
    store.rememberBytes('k', `{"pad":"${'x'.repeat(5000)}"}`);
    expect(store.knownBytes('k')).toBe('{}');

    const claim = await store.claim('in-flight', 'fp');
    expect(claim.outcome).toBe('claimed');
    store.rememberBytes('in-flight', '{}');
    expect(store.knownBytes('in-flight')).toBeUndefined();
  });

  it('forgets the bytes with the answer when it expires', async () => {
    let now = 1_000_000;
    await store.close();
    store = new IdempotencyStore({ path: dir, ttlSeconds: 60, now: () => now });
    await completed('k');
    store.rememberBytes('k', '{}');
    now += 61_000;
    expect(store.get('k')).toBeUndefined();
    expect(store.knownBytes('k')).toBeUndefined();
  });
});
