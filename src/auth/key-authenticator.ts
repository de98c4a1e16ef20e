import { hash, timingSafeEqual } from 'node:crypto';

const digest = (value: string): Buffer => hash('sha256', value, 'buffer');

/**
 * Maps a bearer secret to its owner's id. Secrets are compared as SHA-256 digests with
 * `timingSafeEqual`, and every configured key is compared on every call, so neither the length
 * nor the position of a match leaks through timing.
 */
export function createKeyAuthenticator(
  keys: ReadonlyMap<string, string>,
): (secret: string) => string | undefined {
  const digests = [...keys].map(([id, secret]) => ({ id, digest: digest(secret) }));
  return (secret) => {
    const offered = digest(secret);
    let match: string | undefined;
    for (const entry of digests) {
      if (timingSafeEqual(offered, entry.digest) && match === undefined) match = entry.id;
    }
    return match;
  };
}

/** `Authorization: Bearer <token>` → token. */
export function bearerToken(header: string | undefined): string | undefined {
  const match = header?.match(/^Bearer\s+([\x21-\x7e]{1,512})$/i);
  return match?.[1];
}
