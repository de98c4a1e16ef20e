import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { scopedKey } from '../../src/idempotency/idempotency-key';
import { fingerprint } from '../../src/idempotency/fingerprint';
import { startDevServer, stopDevServer } from '../../src/temporal/dev-server';
import { freePort } from '../support/free-port';
import { TcpProxy } from '../support/tcp-proxy';
import { testState } from '../support/test-env';
import {
  CLIENT_SECRET,
  OTHER_CLIENT_SECRET,
  createCampaign,
  donationBody,
  eventually,
  startStack,
} from '../support/stack';
import type { Stack } from '../support/stack';

const scope = (key: string, clientId = 'client-a') => ({
  clientId,
  method: 'POST',
  route: '/v1/donations',
  key,
});

function request(stack: Stack, headers: Record<string, string>, body: unknown) {
  return stack.app.inject({
    method: 'POST',
    url: '/v1/donations',
    headers: { 'content-type': 'application/json', ...headers },
    payload: JSON.stringify(body),
  });
}

describe('Idempotency-Key over HTTP', () => {
  let stack: Stack;
  let campaignId: string;

  beforeAll(async () => {
    stack = await startStack({ autoPayMs: 100 });
    campaignId = await createCampaign(stack.db);
  });
  afterAll(async () => {
    await stack.stop();
  });

  const auth = { authorization: `Bearer ${CLIENT_SECRET}` };

  it('refuses a missing or malformed key with 400 before touching the store', async () => {
    const before = stack.store.stats().records;
    const missing = await request(stack, auth, donationBody(campaignId));
    expect(missing.statusCode).toBe(400);
    expect(missing.headers['content-type']).toContain('application/problem+json');
    expect(missing.json()).toMatchObject({ type: '/problems/idempotency-key-missing' });
    const invalid = await request(stack, { ...auth, 'idempotency-key': 'two words' }, {});
    expect(invalid.json()).toMatchObject({ type: '/problems/idempotency-key-invalid' });
    expect(stack.store.stats().records).toBe(before);
  });

  it('refuses unknown clients with 401', async () => {
    const response = await request(
      stack,
      { authorization: 'Bearer nope-nope-nope', 'idempotency-key': 'k' },
      donationBody(campaignId),
    );
    expect(response.statusCode).toBe(401);
  });

  it('treats the quoted and the bare form of a key as one key', async () => {
    const key = `quoted-${Date.now()}`;
    const first = await request(
      stack,
      { ...auth, 'idempotency-key': `"${key}"` },
      donationBody(campaignId),
    );
    const second = await request(
      stack,
      { ...auth, 'idempotency-key': key },
      donationBody(campaignId),
    );
    expect(first.statusCode).toBe(202);
    expect(second.headers['idempotent-replayed']).toBe('true');
    expect(second.body).toBe(first.body);
  });

  it('replays a retry of the same meaning however it is serialized, and refuses other bodies', async () => {
    const key = `bytes-${Date.now()}`;
    const body = donationBody(campaignId);
    const send = (payload: string) =>
      stack.app.inject({
        method: 'POST',
        url: '/v1/donations',
        headers: { 'content-type': 'application/json', ...auth, 'idempotency-key': key },
        payload,
      });
    const first = await send(JSON.stringify(body));
    expect(first.statusCode).toBe(202);
    // The same bytes twice (the second is recognized without hashing them), then the same
    // meaning in other bytes: keys reordered, whitespace, another number spelling.
    const reordered = JSON.stringify(
      Object.fromEntries(Object.entries(body).reverse()),
      null,
      2,
    ).replace('50000', '5e4');
    for (const payload of [JSON.stringify(body), JSON.stringify(body), reordered]) {
      const retry = await send(payload);
      expect(retry.statusCode).toBe(202);
      expect(retry.headers['idempotent-replayed']).toBe('true');
      expect(retry.body).toBe(first.body);
    }
    const changed = await send(JSON.stringify({ ...body, message: 'Semangat!!' }));
    expect(changed.statusCode).toBe(422);
    expect(changed.json()).toMatchObject({ code: 'idempotency-key-mismatch' });
    const malformed = await send(JSON.stringify(body).slice(0, -1));
    expect(malformed.statusCode).toBe(400);
    expect(malformed.headers['content-type']).toContain('application/problem+json');
    expect(malformed.headers['idempotent-replayed']).toBeUndefined();
    const rows = await stack.db
      .selectFrom('donations')
      .select('id')
      .where('idempotency_key', '=', key)
      .execute();
    expect(rows).toHaveLength(1);
  });

  it('keeps clients apart: another client with the same key gets its own donation', async () => {
    const key = `shared-${Date.now()}`;
    const a = await request(stack, { ...auth, 'idempotency-key': key }, donationBody(campaignId));
    const b = await request(
      stack,
      { authorization: `Bearer ${OTHER_CLIENT_SECRET}`, 'idempotency-key': key },
      donationBody(campaignId),
    );
    expect(b.statusCode).toBe(202);
    expect(b.headers['idempotent-replayed']).toBeUndefined();
    expect(b.json<{ id: string }>().id).not.toBe(a.json<{ id: string }>().id);
    const readByOther = await stack.app.inject({
      method: 'GET',
      url: `/v1/donations/${a.json<{ id: string }>().id}`,
      headers: { authorization: `Bearer ${OTHER_CLIENT_SECRET}` },
    });
    expect(readByOther.statusCode).toBe(404);
  });

  it('answers 409 with Retry-After while the key is in flight, 422 for another body', async () => {
    const key = `inflight-${Date.now()}`;
    const body = donationBody(campaignId);
    await stack.store.claim(scopedKey(scope(key)), fingerprint(body));
    const busy = await request(stack, { ...auth, 'idempotency-key': key }, body);
    expect(busy.statusCode).toBe(409);
    expect(Number(busy.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(busy.json()).toMatchObject({ code: 'idempotency-key-in-use' });
    const other = await request(
      stack,
      { ...auth, 'idempotency-key': key },
      donationBody(campaignId, 1),
    );
    expect(other.statusCode).toBe(422);
  });

  it('does not cache a validation failure: the corrected retry proceeds', async () => {
    const key = `fixme-${Date.now()}`;
    const bad = await request(stack, { ...auth, 'idempotency-key': key }, { campaignId });
    expect(bad.statusCode).toBe(400);
    const good = await request(
      stack,
      { ...auth, 'idempotency-key': key },
      donationBody(campaignId),
    );
    expect(good.statusCode).toBe(202);
  });
});

describe('A client that hangs up mid-request', () => {
  it('has its claim released at once, not when its request gives up', async () => {
    // Temporal hangs (connections open, nothing flows): the request waits in its handler for
    // its budget and a start's timeout, then answers 503 to nobody. Only the hang-up releases
    // the claim before that.
    const proxy = await TcpProxy.start(testState().temporalAddress);
    const stack = await startStack({
      autoPayMs: -1,
      apiTemporalAddress: proxy.address,
      env: { EARLY_RETURN_MS: '3000', TEMPORAL_REQUEST_TIMEOUT_MS: '3000' },
    });
    const gaveUp = async () => {
      const metrics = await stack.app.inject({ method: 'GET', url: '/metrics' });
      return /galang_http_request_duration_seconds_count\{[^}]*route="\/v1\/donations",status_code="503"\} 1/.test(
        metrics.body,
      );
    };
    try {
      const campaignId = await createCampaign(stack.db);
      proxy.set('blackhole');
      const key = `hang-up-${Date.now()}`;
      const client = http.request(`${stack.apiUrl}/v1/donations`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          authorization: `Bearer ${CLIENT_SECRET}`,
          'idempotency-key': key,
        },
      });
      client.on('error', () => undefined);
      client.end(JSON.stringify(donationBody(campaignId)));
      const stored = scopedKey(scope(key));
      await eventually(async () => stack.store.get(stored)?.status === 'IN_FLIGHT' || undefined);
      client.destroy();
      await eventually(async () => stack.store.get(stored) === undefined || undefined, 2_000);
      expect(await gaveUp()).toBe(false);
      // Let the abandoned request end before the stack closes its Temporal connection.
      await eventually(async () => (await gaveUp()) || undefined);
    } finally {
      proxy.set('pass');
      await stack.stop();
      await proxy.close();
    }
  }, 60_000);
});

describe('Temporal stopped', () => {
  it('answers 503 and releases the key; once Temporal is back the same key succeeds once', async () => {
    const stateDir = mkdtempSync(path.join(os.tmpdir(), 'galang-temporal-stop-'));
    const port = await freePort();
    const server = {
      port,
      uiPort: await freePort(),
      stateDir,
      dbFile: path.join(stateDir, 'db.sqlite'),
    };
    await startDevServer(server);
    const stack = await startStack({
      autoPayMs: 100,
      temporalAddress: `127.0.0.1:${port}`,
      env: { EARLY_RETURN_MS: '1500', TEMPORAL_REQUEST_TIMEOUT_MS: '1500' },
    });
    try {
      const campaignId = await createCampaign(stack.db);
      const key = `outage-${Date.now()}`;
      const headers = { authorization: `Bearer ${CLIENT_SECRET}`, 'idempotency-key': key };
      await stopDevServer(stateDir, port);

      const down = await request(stack, headers, donationBody(campaignId));
      expect(down.statusCode).toBe(503);
      expect(down.headers['retry-after']).toBe('2');
      expect(down.json()).toMatchObject({ code: 'service-unavailable' });
      expect(stack.store.get(scopedKey(scope(key)))).toBeUndefined();

      await startDevServer(server);
      // As a client would: retry on 503 (the worker may still be reconnecting), same key.
      let back = await request(stack, headers, donationBody(campaignId));
      for (let attempt = 0; back.statusCode === 503 && attempt < 30; attempt++) {
        expect(stack.store.get(scopedKey(scope(key)))).toBeUndefined();
        await new Promise((resolve) => setTimeout(resolve, 500));
        back = await request(stack, headers, donationBody(campaignId));
      }
      expect(back.statusCode).toBe(202);
      expect(back.headers['idempotent-replayed']).toBeUndefined();
      const { id } = back.json<{ id: string }>();
      await eventually(async () => {
        const row = await stack.db
          .selectFrom('donations')
          .select('status')
          .where('id', '=', id)
          .executeTakeFirst();
        return row?.status === 'CONFIRMED' ? row : undefined;
      }, 30_000);
      const again = await request(stack, headers, donationBody(campaignId));
      expect(again.headers['idempotent-replayed']).toBe('true');
      const ledger = await stack.db
        .selectFrom('donation_ledger')
        .selectAll()
        .where('donation_id', '=', id)
        .execute();
      expect(ledger).toHaveLength(1);
    } finally {
      await stack.stop();
      await stopDevServer(stateDir, port);
      rmSync(stateDir, { recursive: true, force: true });
    }
  });
});
