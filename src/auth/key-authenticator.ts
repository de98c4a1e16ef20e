import { hash } from 'node:crypto';

/**
 * Bearer keys are looked up by the SHA-256 of the presented secret, as immich does: a lookup
 * compares digests, so its timing says nothing about how much of a secret was guessed right.
 */
export function keyDigest(secret: string): string {
  return hash('sha256', secret, 'base64url');
}

/**
 * Owner ids by the digest of their secrets (`id → secret` in), built once at boot. Of two ids
 * configured with one secret the first is the owner.
 */
export function ownersByKeyDigest(keys: ReadonlyMap<string, string>): ReadonlyMap<string, string> {
  const owners = new Map<string, string>();
  for (const [id, secret] of keys) {
    const digest = keyDigest(secret);
    if (!owners.has(digest)) owners.set(digest, id);
  }
  return owners;
}

/** `Authorization: Bearer <token>` → token. */
export function bearerToken(header: string | undefined): string | undefined {
  const match = header?.match(/^Bearer\s+([\x21-\x7e]{1,512})$/i);
  return match?.[1];
}
