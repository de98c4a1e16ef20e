import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { METADATA_ENCODING_KEY, ValueError } from '@temporalio/common';
import type { DataConverter, Payload, PayloadCodec } from '@temporalio/common';
import { temporal } from '@temporalio/proto';

/** The `encoding` of an encrypted payload, as in Temporal's encryption sample. */
export const ENCRYPTED_ENCODING = 'binary/encrypted';
/** Metadata naming the key a payload was encrypted with, so rotated keys still decrypt. */
export const KEY_ID_METADATA = 'encryption-key-id';

const IV_BYTES = 12;
const TAG_BYTES = 16;
export const PAYLOAD_KEY_BYTES = 32;

/** One AES-256 key of `TEMPORAL_PAYLOAD_KEYS`: its id and its 32 bytes in base64. */
export interface PayloadKey {
  readonly id: string;
  readonly key: string;
}

const text = (value: string) => new TextEncoder().encode(value);
const fromText = (value: Uint8Array | null | undefined) =>
  value ? Buffer.from(value).toString('utf8') : undefined;

/**
 * AES-256-GCM over whole payloads (Temporal's documented encryption-codec pattern), so donor
 * data and provider secrets are ciphertext in Temporal's histories. Encrypts with the first key;
 * decrypts by the key id in the payload's metadata, so payloads written under an earlier key
 * still read while it stays listed. Payloads without the encrypted encoding pass unchanged:
 * histories recorded before encryption still replay. Layout: IV ‖ ciphertext ‖ tag (what
 * WebCrypto's AES-GCM produces, as the sample's codec does).
 */
export class EncryptionCodec implements PayloadCodec {
  private readonly keys: ReadonlyMap<string, Buffer>;
  private readonly current: { id: string; key: Buffer };

  constructor(keys: readonly PayloadKey[]) {
    const [first] = keys;
    if (!first) throw new ValueError('EncryptionCodec needs at least one key');
    this.keys = new Map(keys.map(({ id, key }) => [id, Buffer.from(key, 'base64')]));
    for (const [id, key] of this.keys) {
      if (key.length !== PAYLOAD_KEY_BYTES)
        throw new ValueError(`Payload key ${id} is not 32 bytes`);
    }
    this.current = { id: first.id, key: this.keys.get(first.id) as Buffer };
  }

  async encode(payloads: Payload[]): Promise<Payload[]> {
    return payloads.map((payload) => this.encrypt(payload));
  }

  async decode(payloads: Payload[]): Promise<Payload[]> {
    return payloads.map((payload) => this.decrypt(payload));
  }

  private encrypt(payload: Payload): Payload {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.current.key, iv, {
      authTagLength: TAG_BYTES,
    });
    const plain = temporal.api.common.v1.Payload.encode(payload).finish();
    return {
      metadata: {
        [METADATA_ENCODING_KEY]: text(ENCRYPTED_ENCODING),
        [KEY_ID_METADATA]: text(this.current.id),
      },
      data: Buffer.concat([iv, cipher.update(plain), cipher.final(), cipher.getAuthTag()]),
    };
  }

  private decrypt(payload: Payload): Payload {
    if (fromText(payload.metadata?.[METADATA_ENCODING_KEY]) !== ENCRYPTED_ENCODING) return payload;
    const keyId = fromText(payload.metadata?.[KEY_ID_METADATA]);
    if (keyId === undefined) throw new ValueError('Encrypted payload without an encryption key id');
    const key = this.keys.get(keyId);
    if (!key) {
      throw new ValueError(
        `Payload encrypted with key "${keyId}", which TEMPORAL_PAYLOAD_KEYS does not list`,
      );
    }
    const data = payload.data ?? new Uint8Array();
    if (data.length < IV_BYTES + TAG_BYTES) throw new ValueError('Encrypted payload is truncated');
    const decipher = createDecipheriv('aes-256-gcm', key, data.subarray(0, IV_BYTES), {
      authTagLength: TAG_BYTES,
    });
    decipher.setAuthTag(data.subarray(data.length - TAG_BYTES));
    let plain: Buffer;
    try {
      plain = Buffer.concat([
        decipher.update(data.subarray(IV_BYTES, data.length - TAG_BYTES)),
        decipher.final(),
      ]);
    } catch {
      throw new ValueError(`Payload does not decrypt with key "${keyId}" (altered or wrong key)`);
    }
    return temporal.api.common.v1.Payload.decode(plain);
  }
}

/** The data converter of every Temporal client and worker galang builds. */
export function createDataConverter(keys: readonly PayloadKey[]): DataConverter {
  return { payloadCodecs: [new EncryptionCodec(keys)] };
}
