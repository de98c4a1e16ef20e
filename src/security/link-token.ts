import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * The token in a link that opens one thing without a key (a receipt's PDF, a donor's pledge):
 * an HMAC of what it opens (`receipt:<number>`, `pledge:<id>`) under the first secret of the
 * rotation list, so nothing is stored and a link stays valid while its secret is still listed.
 * Only the holder of the mail (or the client's API) has it: the ids alone are guessable.
 */
export function linkToken(secret: string, subject: string): string {
  return createHmac('sha256', secret).update(subject).digest('base64url');
}

/** Checks a token against every listed secret, in constant time for each. */
export function isLinkToken(
  secrets: readonly string[],
  subject: string,
  token: string | undefined,
): boolean {
  if (!token) return false;
  const given = Buffer.from(token);
  return secrets.some((secret) => {
    const expected = Buffer.from(linkToken(secret, subject));
    return expected.length === given.length && timingSafeEqual(expected, given);
  });
}
