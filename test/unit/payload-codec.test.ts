import { randomBytes, webcrypto } from 'node:crypto';
import { defaultPayloadConverter } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import {
  EncryptionCodec,
  ENCRYPTED_ENCODING,
  KEY_ID_METADATA,
} from '../../src/temporal/payload-codec';

const newKey = (id: string) => ({ id, key: randomBytes(32).toString('base64') });
const text = (bytes: Uint8Array | null | undefined) => Buffer.from(bytes ?? []).toString();

describe('EncryptionCodec', () => {
  const donor = defaultPayloadConverter.toPayload({ email: 'ani@example.com', name: 'Ani' });

  it('encrypts whole payloads with the first key and decrypts them back', async () => {
    const codec = new EncryptionCodec([newKey('k2'), newKey('k1')]);
    const [encrypted] = await codec.encode([donor]);
    expect(text(encrypted?.metadata?.encoding)).toBe(ENCRYPTED_ENCODING);
    expect(text(encrypted?.metadata?.[KEY_ID_METADATA])).toBe('k2');
    expect(Buffer.from(encrypted?.data ?? []).includes('ani@example.com')).toBe(false);
    const [decrypted] = await codec.decode(encrypted ? [encrypted] : []);
    expect(defaultPayloadConverter.fromPayload(decrypted ?? {})).toEqual({
      email: 'ani@example.com',
      name: 'Ani',
    });
  });

  it('reads payloads of a rotated-out key while it is listed, and refuses them once it is not', async () => {
    const old = newKey('k1');
    const [written] = await new EncryptionCodec([old]).encode([donor]);
    if (!written) throw new Error('no payload');
    await expect(new EncryptionCodec([newKey('k2'), old]).decode([written])).resolves.toHaveLength(
      1,
    );
    await expect(new EncryptionCodec([newKey('k2')]).decode([written])).rejects.toThrow(
      /key "k1", which TEMPORAL_PAYLOAD_KEYS does not list/,
    );
  });

  it('passes payloads without the encrypted encoding through unchanged (recorded histories)', async () => {
    const codec = new EncryptionCodec([newKey('k')]);
    await expect(codec.decode([donor])).resolves.toEqual([donor]);
  });

  it('refuses a payload altered in Temporal', async () => {
    const codec = new EncryptionCodec([newKey('k')]);
    const [encrypted] = await codec.encode([donor]);
    if (!encrypted?.data) throw new Error('no payload');
    const data = Buffer.from(encrypted.data);
    data[20] = (data[20] ?? 0) ^ 1;
    await expect(codec.decode([{ ...encrypted, data }])).rejects.toThrow(/does not decrypt/);
  });

  it('lays out IV ‖ ciphertext ‖ tag as WebCrypto does (Temporal’s sample codec reads it)', async () => {
    const key = newKey('k');
    const [encrypted] = await new EncryptionCodec([key]).encode([donor]);
    const data = encrypted?.data ?? new Uint8Array();
    const cryptoKey = await webcrypto.subtle.importKey(
      'raw',
      Buffer.from(key.key, 'base64'),
      { name: 'AES-GCM' },
      false,
      ['decrypt'],
    );
    const plain = await webcrypto.subtle.decrypt(
      { name: 'AES-GCM', iv: data.subarray(0, 12), tagLength: 128 },
      cryptoKey,
      data.subarray(12),
    );
    const payload = temporal.api.common.v1.Payload.decode(new Uint8Array(plain));
    expect(defaultPayloadConverter.fromPayload(payload)).toMatchObject({ name: 'Ani' });
  });
});
