import { createHmac } from 'node:crypto';
import { signStandardWebhook, verifyStandardWebhook } from '../../src/providers/standard-webhooks';

const secret = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const rotated = 'whsec_c2Vjb25kLXNlY3JldC1mb3Itcm90YXRpb24=';
const body = Buffer.from('{"type":"payment.updated","data":{"id":"p1"}}');
const id = 'msg_p5jXN8AQM9LWM0D4loKWxJek';
const ts = 1_700_000_000;

describe('Standard Webhooks signatures', () => {
  it('matches the documented formula: base64 HMAC-SHA256 of id.timestamp.body', () => {
    const key = Buffer.from(secret.slice(6), 'base64');
    const expected = createHmac('sha256', key)
      .update(`${id}.${ts}.${body.toString()}`)
      .digest('base64');
    expect(signStandardWebhook(secret, id, ts, body)).toBe(`v1,${expected}`);
  });

  const verify = (overrides: Partial<Parameters<typeof verifyStandardWebhook>[0]>) =>
    verifyStandardWebhook({
      secrets: [secret],
      id,
      timestamp: String(ts),
      signature: signStandardWebhook(secret, id, ts, body),
      body,
      nowSeconds: ts + 10,
      ...overrides,
    });

  it('accepts a valid signature', () => {
    expect(verify({})).toEqual({ ok: true });
  });

  it('refuses a wrong secret, a tampered body and re-serialized JSON', () => {
    expect(verify({ secrets: [rotated] }).ok).toBe(false);
    expect(verify({ body: Buffer.from(body.toString().replace('p1', 'p2')) }).ok).toBe(false);
    const reserialized = Buffer.from(JSON.stringify(JSON.parse(body.toString()), null, 1));
    expect(verify({ body: reserialized }).ok).toBe(false);
  });

  it('refuses stale and future timestamps beyond five minutes', () => {
    expect(verify({ nowSeconds: ts + 301 }).ok).toBe(false);
    expect(verify({ nowSeconds: ts - 301 }).ok).toBe(false);
    expect(verify({ nowSeconds: ts + 299 }).ok).toBe(true);
  });

  it('accepts any of several secrets and any of several signatures during rotation', () => {
    expect(verify({ secrets: [rotated, secret] }).ok).toBe(true);
    const both = `${signStandardWebhook(rotated, id, ts, body)} ${signStandardWebhook(secret, id, ts, body)}`;
    expect(verify({ signature: both }).ok).toBe(true);
  });

  it('refuses missing headers and malformed timestamps', () => {
    expect(verify({ id: undefined }).ok).toBe(false);
    expect(verify({ signature: undefined }).ok).toBe(false);
    expect(verify({ timestamp: '12e3' }).ok).toBe(false);
    expect(verify({ signature: 'v1,not-base64!!' }).ok).toBe(false);
  });
});
