import { createHmac, timingSafeEqual } from 'node:crypto';

export const STRIPE_TOLERANCE_SECONDS = 300;

/** `Stripe-Signature` as Stripe sends it: `t=<unix>,v1=<hex>[,v1=<hex>…]`. */
export function signStripe(secret: string, timestamp: number, body: Buffer | string): string {
  const mac = createHmac('sha256', secret).update(`${timestamp}.`).update(body).digest('hex');
  return `t=${timestamp},v1=${mac}`;
}

/**
 * Verifies a Stripe webhook: HMAC-SHA256 with the endpoint secret (the whole `whsec_…` string)
 * over `${t}.${rawBody}`, any of several `v1` values (Stripe sends one per active secret while a
 * secret is rolled), and the timestamp within the tolerance.
 */
export function verifyStripe(options: {
  secrets: readonly string[];
  header: string | undefined;
  body: Buffer;
  nowSeconds: number;
  toleranceSeconds?: number;
}): { ok: true } | { ok: false; reason: string } {
  if (!options.header) return { ok: false, reason: 'missing Stripe-Signature' };
  const parts = options.header.split(',').map((p) => p.trim().split('='));
  const timestamp = parts.find(([k]) => k === 't')?.[1];
  const offered = parts
    .filter(([k, v]) => k === 'v1' && v !== undefined && /^[0-9a-f]{64}$/.test(v))
    .map(([, v]) => Buffer.from(v ?? '', 'hex'));
  if (!timestamp || !/^\d{1,12}$/.test(timestamp) || offered.length === 0) {
    return { ok: false, reason: 'malformed Stripe-Signature' };
  }
  if (
    Math.abs(options.nowSeconds - Number(timestamp)) >
    (options.toleranceSeconds ?? STRIPE_TOLERANCE_SECONDS)
  ) {
    return { ok: false, reason: 'timestamp outside tolerance' };
  }
  for (const secret of options.secrets) {
    const expected = createHmac('sha256', secret)
      .update(`${timestamp}.`)
      .update(options.body)
      .digest();
    if (offered.some((o) => timingSafeEqual(o, expected))) return { ok: true };
  }
  return { ok: false, reason: 'no signature matches' };
}
