import { readFileSync } from 'node:fs';
import { PAYLOAD_KEY_BYTES } from '../temporal/payload-codec';
import type { PayloadKey } from '../temporal/payload-codec';
import type { TemporalConnectionConfig, TemporalTlsConfig } from '../temporal/temporal-connection';
import type { EnvReader } from './env-reader';

/** The development payload key: public, so production refuses it (by value, whatever its id). */
export const DEV_PAYLOAD_KEYS = 'dev:Z2FsYW5nLWRldi1wYXlsb2Fka2V5LW5vdC1zZWNyZXQ=';

/** Whether every key is the public development key (the codec endpoint then needs no key). */
export function usesDevPayloadKey(keys: readonly PayloadKey[]): boolean {
  return keys.every(({ key }) => DEV_PAYLOAD_KEYS.endsWith(`:${key}`));
}

export type TemporalSecurity = Pick<TemporalConnectionConfig, 'tls' | 'apiKey' | 'payloadKeys'>;

/**
 * TLS, mTLS, API key and payload keys of every Temporal connection, under the names Temporal's
 * own CLI and SDKs read (`TEMPORAL_TLS_*`, `TEMPORAL_API_KEY`), so one environment configures
 * galang and `temporal` alike. Certificate files are read here once, so a wrong path or a file
 * that is no PEM stops the boot with its name instead of failing the first connection.
 */
export function readTemporalSecurity(
  reader: EnvReader,
  problems: string[],
  production: boolean,
): TemporalSecurity {
  const files = {
    caFile: pemFile(reader, problems, 'TEMPORAL_TLS_SERVER_CA_CERT_PATH', 'CERTIFICATE'),
    certFile: pemFile(reader, problems, 'TEMPORAL_TLS_CLIENT_CERT_PATH', 'CERTIFICATE'),
    keyFile: pemFile(reader, problems, 'TEMPORAL_TLS_CLIENT_KEY_PATH', 'PRIVATE KEY'),
  };
  const serverName = reader.optional('TEMPORAL_TLS_SERVER_NAME');
  const apiKey = reader.optional('TEMPORAL_API_KEY');
  if ((files.certFile === undefined) !== (files.keyFile === undefined)) {
    problems.push(
      'TEMPORAL_TLS_CLIENT_CERT_PATH and TEMPORAL_TLS_CLIENT_KEY_PATH go together (mTLS needs both)',
    );
  }
  const tlsSettings: TemporalTlsConfig = { ...files, serverName };
  const anyTlsSetting = Object.values(tlsSettings).some((value) => value !== undefined);
  const tlsOn = reader.boolean('TEMPORAL_TLS', anyTlsSetting || apiKey !== undefined);
  if (!tlsOn && anyTlsSetting) {
    problems.push('TEMPORAL_TLS is false, but TEMPORAL_TLS_* settings are given');
  }
  if (!tlsOn && apiKey !== undefined && production) {
    problems.push(
      'TEMPORAL_TLS is false, but TEMPORAL_API_KEY is set: production sends the key only over TLS',
    );
  }
  const payloadKeys = readPayloadKeys(reader, problems, production);
  return {
    tls: tlsOn ? withoutUnset(tlsSettings) : false,
    ...(apiKey === undefined ? {} : { apiKey }),
    payloadKeys,
  };
}

/** `TEMPORAL_PAYLOAD_KEYS=id:base64,…`: 32-byte AES keys, the first encrypts (rotation list). */
function readPayloadKeys(reader: EnvReader, problems: string[], production: boolean): PayloadKey[] {
  const name = 'TEMPORAL_PAYLOAD_KEYS';
  const keys: PayloadKey[] = [];
  for (const entry of reader.list(name, production ? undefined : DEV_PAYLOAD_KEYS)) {
    const [id, key, ...rest] = entry.split(':');
    if (!id || !key || rest.length > 0 || !/^[A-Za-z0-9_.-]{1,64}$/.test(id)) {
      problems.push(`${name} entries must be id:base64key with a [A-Za-z0-9_.-] id`);
    } else if (
      !/^[A-Za-z0-9+/]+={0,2}$/.test(key) ||
      Buffer.from(key, 'base64').length !== PAYLOAD_KEY_BYTES
    ) {
      problems.push(
        `${name}: the key "${id}" must be ${PAYLOAD_KEY_BYTES} bytes in base64 (openssl rand -base64 32)`,
      );
    } else if (keys.some((known) => known.id === id)) {
      problems.push(`${name}: "${id}" is listed twice`);
    } else {
      keys.push({ id, key });
    }
  }
  return keys;
}

/** The path of a readable PEM file holding `label` (e.g. `CERTIFICATE`), or a problem. */
function pemFile(
  reader: EnvReader,
  problems: string[],
  name: string,
  label: string,
): string | undefined {
  const file = reader.optional(name);
  if (file === undefined) return undefined;
  let content: string;
  try {
    content = readFileSync(file, 'utf8');
  } catch (error) {
    problems.push(`${name}: cannot read "${file}" (${(error as NodeJS.ErrnoException).code})`);
    return file;
  }
  if (!new RegExp(`-----BEGIN [A-Z ]*${label}-----`).test(content)) {
    problems.push(`${name}: "${file}" holds no PEM ${label.toLowerCase()}`);
  } else if (label === 'PRIVATE KEY' && isEncryptedPem(content)) {
    problems.push(
      `${name}: "${file}" holds an encrypted private key, which Temporal's SDK cannot open; store it decrypted (openssl pkey -in key.pem -out plain.pem) in a file only galang reads`,
    );
  }
  return file;
}

/**
 * PKCS#8 `ENCRYPTED PRIVATE KEY` or a legacy OpenSSL key with `Proc-Type: 4,ENCRYPTED`. The SDK
 * takes no passphrase, so such a key would fail only at the first connection, with a TLS error.
 */
function isEncryptedPem(content: string): boolean {
  return /-----BEGIN ENCRYPTED PRIVATE KEY-----|^Proc-Type:\s*4,\s*ENCRYPTED/m.test(content);
}

function withoutUnset<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T;
}
