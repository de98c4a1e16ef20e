import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * Standard Webhooks (standardwebhooks.com) signing: HMAC-SHA256 with the base64 secret after
 * `whsec_`, over `${webhook-id}.${webhook-timestamp}.${body}`, sent as `v1,<base64>`; several
 * space-separated signatures may be present during secret rotation.
 */
export const DEFAULT_TOLERANCE_SECONDS = 300;

function secretBytes(secret: string): Buffer {
  return Buffer.from(secret.startsWith('whsec_') ? secret.slice(6) : secret, 'base64');
}

export function signStandardWebhook(
  secret: string,
  id: string,
  timestampSeconds: number,
  body: Buffer | string,
): string {
  const mac = createHmac('sha256', secretBytes(secret))
    .update(`${id}.${timestampSeconds}.`)
    .update(body)
    .digest('base64');
  return `v1,${mac}`;
}

export type VerifyResult = { ok: true } | { ok: false; reason: string };

export function verifyStandardWebhook(options: {
  secrets: readonly string[];
  id: string | undefined;
  timestamp: string | undefined;
  signature: string | undefined;
  body: Buffer;
  nowSeconds: number;
  toleranceSeconds?: number;
}): VerifyResult {
  const { id, timestamp, signature } = options;
  if (!id || !timestamp || !signature) return { ok: false, reason: 'missing webhook headers' };
  if (!/^\d{1,12}$/.test(timestamp)) return { ok: false, reason: 'malformed timestamp' };
  const tolerance = options.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS;
  if (Math.abs(options.nowSeconds - Number(timestamp)) > tolerance) {
    return { ok: false, reason: 'timestamp outside tolerance' };
  }
  const offered = signature
    .split(' ')
    .filter((part) => part.startsWith('v1,'))
    .map((part) => Buffer.from(part.slice(3), 'base64'));
  for (const secret of options.secrets) {
    const expected = Buffer.from(
      signStandardWebhook(secret, id, Number(timestamp), options.body).slice(3),
      'base64',
    );
    // Every candidate is compared in constant time; lengths are public (always 32 bytes).
    if (offered.some((o) => o.length === expected.length && timingSafeEqual(o, expected))) {
      return { ok: true };
    }
  }
  return { ok: false, reason: 'no signature matches' };
}
