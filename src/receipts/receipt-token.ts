import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * The token in a receipt's link: an HMAC of its number under the first of the rotation list's
 * secrets, so nothing is stored and a link stays valid while its secret is still listed. Only
 * the number's holder with the mail (or the client's API) has it: numbers alone are guessable.
 */
export function receiptToken(secret: string, number: string): string {
  return createHmac('sha256', secret).update(`receipt:${number}`).digest('base64url');
}

/** Checks a token against every listed secret, in constant time for each. */
export function isReceiptToken(
  secrets: readonly string[],
  number: string,
  token: string | undefined,
): boolean {
  if (!token) return false;
  const given = Buffer.from(token);
  return secrets.some((secret) => {
    const expected = Buffer.from(receiptToken(secret, number));
    return expected.length === given.length && timingSafeEqual(expected, given);
  });
}
