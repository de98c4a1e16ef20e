import type { EnvReader } from './env-reader';

/** The development codec key: public, so production refuses it (by value, whatever its id). */
export const DEV_CODEC_KEYS = 'demo-codec:codec-secret';

/** The payload codec endpoint and the one role it admits. */
export interface CodecConfig {
  /** `POST /v1/codec/decode` and `/encode` are served (`CODEC_ENDPOINT`). */
  readonly enabled: boolean;
  /**
   * The codec role's keys, by id (`CODEC_KEYS`): the codec endpoint accepts these and nothing
   * else, and these are accepted nowhere else, so the key a UI proxy holds cannot refund.
   */
  readonly keys: ReadonlyMap<string, string>;
}

/** A role's keys, to refuse a secret shared between roles. */
export interface RoleKeys {
  readonly name: string;
  readonly keys: ReadonlyMap<string, string>;
}

/**
 * `CODEC_ENDPOINT` (default on) and `CODEC_KEYS`. The development key is the default only in
 * development; production with the endpoint on needs keys of its own; elsewhere no keys means
 * no one decodes. A secret also listed for another role is refused: the roles would merge.
 */
export function readCodec(
  reader: EnvReader,
  problems: string[],
  env: 'development' | 'test' | 'production',
  otherRoles: readonly RoleKeys[],
): CodecConfig {
  const enabled = reader.boolean('CODEC_ENDPOINT', true);
  const keys = reader.keyList(
    'CODEC_KEYS',
    env === 'development' ? DEV_CODEC_KEYS : undefined,
    !(env === 'production' && enabled),
  );
  for (const [id, secret] of keys) {
    for (const role of otherRoles) {
      const shared = [...role.keys].find(([, other]) => other === secret);
      if (shared) {
        problems.push(
          `CODEC_KEYS: "${id}" has the secret of ${role.name} "${shared[0]}"; each role needs its own`,
        );
      }
    }
  }
  return { enabled, keys };
}
