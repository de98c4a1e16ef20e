import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import type { StackPki } from './pki';

/** Secrets of one stack: long, random, and each role's its own. */
export interface StackSecrets {
  clientId: string;
  clientSecret: string;
  operatorId: string;
  operatorSecret: string;
  /** The Temporal UI's codec proxy key (deploy/codec-proxy.conf). */
  codecId: string;
  codecSecret: string;
  metricsToken: string;
  simulatorWebhookSecret: string;
  payloadKeys: string;
  receiptTokenSecrets: string;
}

const token = () => randomBytes(32).toString('base64url');

/** Fresh secrets, as an operator makes them (`openssl rand -base64 32`). */
export function makeSecrets(): StackSecrets {
  return {
    clientId: 'donor-app',
    clientSecret: token(),
    operatorId: 'ops',
    operatorSecret: token(),
    codecId: 'ui-codec',
    codecSecret: token(),
    metricsToken: token(),
    simulatorWebhookSecret: `whsec_${randomBytes(32).toString('base64')}`,
    payloadKeys: `k1:${randomBytes(32).toString('base64')}`,
    receiptTokenSecrets: `r1:${token()}`,
  };
}

export interface GalangEndpoints {
  apiPort: number;
  simulatorPort: number;
  smtpPort: number;
  databaseUrl: string;
  redisUrl: string;
  temporalAddress: string;
  namespace: string;
  dataDir: string;
}

export type GalangRole = 'api' | 'worker' | 'simulator';

/**
 * The environment of one galang process in production mode, as a deployment sets it: real
 * secrets, TLS to Temporal with the role's own client certificate (the simulator talks to no
 * Temporal: it only verifies the server), and the simulator allowed explicitly.
 */
export function galangEnv(
  role: GalangRole,
  endpoints: GalangEndpoints,
  secrets: StackSecrets,
  pki: StackPki,
): Record<string, string> {
  const client = role === 'simulator' ? undefined : pki.clients[role];
  return {
    PATH: process.env.PATH ?? '',
    NODE_ENV: 'production',
    HOST: '127.0.0.1',
    PORT: String(endpoints.apiPort),
    PUBLIC_URL: `http://127.0.0.1:${endpoints.apiPort}`,
    DATABASE_URL: endpoints.databaseUrl,
    REDIS_URL: endpoints.redisUrl,
    REDIS_KEY_PREFIX: 'galang:',
    TEMPORAL_ADDRESS: endpoints.temporalAddress,
    TEMPORAL_NAMESPACE: endpoints.namespace,
    TEMPORAL_TASK_QUEUE: 'donations',
    TEMPORAL_TLS: 'true',
    TEMPORAL_TLS_SERVER_CA_CERT_PATH: pki.ca,
    TEMPORAL_TLS_SERVER_NAME: pki.frontendName,
    ...(client && {
      TEMPORAL_TLS_CLIENT_CERT_PATH: client.cert,
      TEMPORAL_TLS_CLIENT_KEY_PATH: client.key,
    }),
    TEMPORAL_PAYLOAD_KEYS: secrets.payloadKeys,
    DATA_DIR: endpoints.dataDir,
    API_KEYS: `${secrets.clientId}:${secrets.clientSecret}`,
    OPERATOR_KEYS: `${secrets.operatorId}:${secrets.operatorSecret}`,
    CODEC_KEYS: `${secrets.codecId}:${secrets.codecSecret}`,
    METRICS_TOKEN: secrets.metricsToken,
    PAYMENT_PROVIDER: 'simulator',
    ALLOW_SIMULATOR: 'true',
    SIMULATOR_PORT: String(endpoints.simulatorPort),
    SIMULATOR_URL: `http://127.0.0.1:${endpoints.simulatorPort}`,
    SIMULATOR_WEBHOOK_URL: `http://127.0.0.1:${endpoints.apiPort}/v1/webhooks/simulator`,
    SIMULATOR_WEBHOOK_SECRET: secrets.simulatorWebhookSecret,
    SMTP_URL: `smtp://127.0.0.1:${endpoints.smtpPort}`,
    MAIL_FROM: 'galang stack <receipts@galang.test>',
    ORG_NAME: 'galang production-shaped stack',
    ORG_ADDRESS: 'Jl. Contoh No. 1, Jakarta',
    ORG_TAX_ID: '00.000.000.0-000.000',
    RECEIPT_TOKEN_SECRETS: secrets.receiptTokenSecrets,
    LOG_LEVEL: 'info',
  };
}

/** Writes the API's environment as a file an operator can source (mode 600). */
export function writeEnvFile(file: string, env: Record<string, string>): void {
  const lines = Object.entries(env)
    .filter(([name]) => name !== 'PATH')
    .map(([name, value]) => `${name}='${value.replaceAll("'", "'\\''")}'`);
  writeFileSync(file, `${lines.join('\n')}\n`, { mode: 0o600 });
}
