import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import { DEV_API_KEYS, DEV_OPERATOR_KEYS, DEV_SIMULATOR_SECRET } from '../../src/config/config';
import { DEV_PAYLOAD_KEYS } from '../../src/config/temporal-config';
import { removeStoreFiles } from '../../src/idempotency/claims-location';
import { spawnEntry } from '../support/child-entry';
import { productionEnv } from '../support/production-env';
import { ALL_PROVIDERS_ENV, UNLIMITED } from '../support/stack';
import { testState } from '../support/test-env';

const root = path.resolve(__dirname, '../..');
const OWN_SIMULATOR_SECRET = `whsec_${Buffer.from(randomUUID()).toString('base64')}`;

/** Runs an entry point with only `env`; resolves with its exit code and stderr. */
function boot(entry: string, env: Record<string, string>) {
  return new Promise<{ code: number | null; stderr: string }>((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', `src/entry/${entry}.ts`], {
      cwd: root,
      env: { PATH: process.env.PATH ?? '', ...env },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    // 'close', not 'exit': at 'exit' the child's stderr may still hold unread data.
    child.once('close', (code) => {
      resolve({ code, stderr });
    });
  });
}

/**
 * The real entry points in production mode, as a deployment starts them: each unsafe setting
 * stops the boot before anything is opened, with a message naming it and exit code 78
 * (EX_CONFIG); the same environment without it boots.
 */
describe('production boot', () => {
  it('refuses the simulator, test keys, short and development secrets, each by name', async () => {
    const cases: [string, string, Record<string, string>, RegExp][] = [
      [
        'api',
        'the simulator',
        { PAYMENT_PROVIDER: 'simulator', SIMULATOR_WEBHOOK_SECRET: OWN_SIMULATOR_SECRET },
        /PAYMENT_PROVIDER=simulator moves no money: refused in production unless ALLOW_SIMULATOR=true/,
      ],
      [
        'api',
        'a short client secret',
        { API_KEYS: 'shop:only-14-chars' },
        /API_KEYS: the secret of "shop" must have at least 16 characters in production/,
      ],
      [
        'api',
        'a short operator secret',
        { OPERATOR_KEYS: 'ops:0123456789' },
        /OPERATOR_KEYS: the secret of "ops" must have at least 16 characters in production/,
      ],
      [
        'api',
        'the development client key, under another id',
        { API_KEYS: `shop:${DEV_API_KEYS.split(':')[1] ?? ''}` },
        /API_KEYS: "shop" is the public development value/,
      ],
      [
        'worker',
        'the development operator key',
        { OPERATOR_KEYS: DEV_OPERATOR_KEYS },
        /OPERATOR_KEYS: "demo-operator" is the public development value/,
      ],
      [
        'api',
        'the development payload key',
        { TEMPORAL_PAYLOAD_KEYS: DEV_PAYLOAD_KEYS },
        /TEMPORAL_PAYLOAD_KEYS: "dev" is the public development value/,
      ],
      [
        'api',
        'the development simulator secret, even with the simulator allowed',
        {
          PAYMENT_PROVIDER: 'simulator',
          ALLOW_SIMULATOR: 'true',
          SIMULATOR_WEBHOOK_SECRET: DEV_SIMULATOR_SECRET,
        },
        /SIMULATOR_WEBHOOK_SECRET: "#1" is the public development value/,
      ],
      [
        'worker',
        'no metrics token',
        { METRICS_TOKEN: '' },
        /METRICS_TOKEN is required in production/,
      ],
      [
        'api',
        'a Stripe test-mode key',
        { STRIPE_SECRET_KEY: 'sk_test_0123456789abcdef' },
        /STRIPE_SECRET_KEY is a Stripe test-mode key \(sk_test_…\)/,
      ],
      [
        'api',
        'no codec keys while the codec endpoint is on',
        { CODEC_KEYS: '' },
        /CODEC_KEYS is required/,
      ],
      [
        'api',
        'no payload keys',
        { TEMPORAL_PAYLOAD_KEYS: '' },
        /TEMPORAL_PAYLOAD_KEYS is required/,
      ],
    ];
    const results = await Promise.all(
      cases.map(([entry, , overrides]) => boot(entry, productionEnv(overrides))),
    );
    cases.forEach(([entry, what, , message], index) => {
      const result = results[index];
      expect({ entry, what, code: result?.code }).toEqual({ entry, what, code: 78 });
      expect(result?.stderr).toMatch(message);
      // A secret is named by its setting and id, never printed.
      expect(result?.stderr).not.toMatch(/demo-secret|operator-secret|0123456789/);
    });
  });

  it('boots the same environment once the simulator is allowed with a secret of its own', async () => {
    const state = testState();
    const lmdb = path.join(os.tmpdir(), `galang-prod-boot-${randomUUID()}`);
    const api = await spawnEntry(
      'api',
      productionEnv({
        PAYMENT_PROVIDER: 'simulator',
        ALLOW_SIMULATOR: 'true',
        SIMULATOR_WEBHOOK_SECRET: OWN_SIMULATOR_SECRET,
        HOST: '127.0.0.1',
        PORT: '0',
        DATABASE_URL: state.databaseUrl,
        REDIS_URL: state.redisUrl,
        REDIS_KEY_PREFIX: state.redisKeyPrefix,
        TEMPORAL_ADDRESS: state.temporalAddress,
        LMDB_PATH: lmdb,
        LOG_LEVEL: 'info',
        ...UNLIMITED,
        // Every provider the shared database has open donations on, with live-shaped keys:
        // production refuses sandbox ones.
        ...ALL_PROVIDERS_ENV,
        MIDTRANS_SERVER_KEYS: 'Mid-server-unreachable-live-key',
        STRIPE_SECRET_KEY: 'sk_live_unreachable',
      }),
      (line) => line.includes('"api listening"'),
    );
    try {
      const { url } = JSON.parse(api.readyLine) as { url: string };
      expect((await fetch(`${url}/healthz`)).status).toBe(200);
      // Production: no public /docs.
      expect((await fetch(`${url}/docs/json`)).status).toBe(404);
    } finally {
      await api.stop();
      removeStoreFiles(lmdb);
    }
  });
});
