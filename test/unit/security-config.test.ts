import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { DEV_CODEC_KEYS } from '../../src/config/codec-config';
import { loadConfig } from '../../src/config/config';
import { problemsOf } from '../support/config-problems';
import { connectionOptions } from '../../src/temporal/temporal-connection';
import { productionEnv } from '../support/production-env';

describe('Temporal connection settings', () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'galang-config-'));
  const pem = (name: string, label: string) => {
    const file = path.join(dir, name);
    writeFileSync(file, `-----BEGIN ${label}-----\nAAAA\n-----END ${label}-----\n`);
    return file;
  };
  const ca = pem('ca.pem', 'CERTIFICATE');
  const cert = pem('client.pem', 'CERTIFICATE');
  const key = pem('client.key', 'PRIVATE KEY');

  it('is plaintext to the dev server unless told otherwise', () => {
    expect(loadConfig({}).temporal.tls).toBe(false);
  });

  it('turns TLS on with a CA, a server name, a client certificate or an API key', () => {
    const tls = loadConfig({
      TEMPORAL_TLS_SERVER_CA_CERT_PATH: ca,
      TEMPORAL_TLS_SERVER_NAME: 'temporal.internal',
      TEMPORAL_TLS_CLIENT_CERT_PATH: cert,
      TEMPORAL_TLS_CLIENT_KEY_PATH: key,
    }).temporal;
    expect(tls.tls).toEqual({
      caFile: ca,
      certFile: cert,
      keyFile: key,
      serverName: 'temporal.internal',
    });
    const options = connectionOptions(tls);
    expect(options.tls).toMatchObject({ serverNameOverride: 'temporal.internal' });
    expect(options.tls && options.tls.clientCertPair?.crt.toString()).toMatch(/BEGIN CERTIFICATE/);

    const cloud = loadConfig({ TEMPORAL_API_KEY: 'key-123', TEMPORAL_NAMESPACE: 'galang.a1b2c' });
    expect(cloud.temporal.tls).toEqual({});
    expect(connectionOptions(cloud.temporal)).toMatchObject({ apiKey: 'key-123', tls: {} });
  });

  it('sends an API key over plaintext only outside production', () => {
    // A dev server behind an authorizer may take a key without TLS; production never sends one.
    expect(loadConfig({ TEMPORAL_API_KEY: 'k', TEMPORAL_TLS: 'false' }).temporal.tls).toBe(false);
    expect(problemsOf(productionEnv({ TEMPORAL_API_KEY: 'k', TEMPORAL_TLS: 'false' }))).toEqual([
      'TEMPORAL_TLS is false, but TEMPORAL_API_KEY is set: production sends the key only over TLS',
    ]);
    expect(
      loadConfig(productionEnv({ TEMPORAL_API_KEY: 'k', TEMPORAL_TLS: 'true' })).temporal.tls,
    ).toEqual({});
  });

  it('refuses an encrypted mTLS private key at boot: nothing could pass its passphrase', () => {
    const encrypted = pem('encrypted.key', 'ENCRYPTED PRIVATE KEY');
    const legacy = path.join(dir, 'legacy.key');
    writeFileSync(
      legacy,
      [
        '-----BEGIN RSA PRIVATE KEY-----',
        'Proc-Type: 4,ENCRYPTED',
        'DEK-Info: AES-256-CBC,00112233445566778899AABBCCDDEEFF',
        '',
        'AAAA',
        '-----END RSA PRIVATE KEY-----',
        '',
      ].join('\n'),
    );
    for (const file of [encrypted, legacy]) {
      const env = { TEMPORAL_TLS_CLIENT_CERT_PATH: cert, TEMPORAL_TLS_CLIENT_KEY_PATH: file };
      const expected = [
        `TEMPORAL_TLS_CLIENT_KEY_PATH: "${file}" holds an encrypted private key, which Temporal's SDK cannot open; store it decrypted (openssl pkey -in key.pem -out plain.pem) in a file only galang reads`,
      ];
      expect(problemsOf(productionEnv(env))).toEqual(expected);
      expect(problemsOf(env)).toEqual(expected);
    }
  });

  it('names each unusable TLS setting at boot', () => {
    expect(problemsOf({ TEMPORAL_TLS_SERVER_CA_CERT_PATH: path.join(dir, 'missing.pem') })).toEqual(
      [
        expect.stringMatching(
          /TEMPORAL_TLS_SERVER_CA_CERT_PATH: cannot read ".*missing.pem" \(ENOENT\)/,
        ),
      ],
    );
    expect(problemsOf({ TEMPORAL_TLS_SERVER_CA_CERT_PATH: key })).toEqual([
      expect.stringMatching(/holds no PEM certificate/),
    ]);
    expect(problemsOf({ TEMPORAL_TLS_CLIENT_CERT_PATH: cert })).toEqual([
      expect.stringMatching(/go together \(mTLS needs both\)/),
    ]);
    expect(problemsOf({ TEMPORAL_TLS: 'false', TEMPORAL_TLS_SERVER_NAME: 'x' })).toEqual([
      'TEMPORAL_TLS is false, but TEMPORAL_TLS_* settings are given',
    ]);
    expect(problemsOf({ TEMPORAL_TLS: 'yes' })).toEqual([
      'TEMPORAL_TLS must be true or false, got "yes"',
    ]);
  });

  it('reads payload keys as a rotation list of 32-byte keys', () => {
    const a = randomBytes(32).toString('base64');
    const b = randomBytes(32).toString('base64');
    expect(loadConfig({ TEMPORAL_PAYLOAD_KEYS: `new:${a},old:${b}` }).temporal.payloadKeys).toEqual(
      [
        { id: 'new', key: a },
        { id: 'old', key: b },
      ],
    );
    expect(
      problemsOf({ TEMPORAL_PAYLOAD_KEYS: `k:${randomBytes(16).toString('base64')}` }),
    ).toEqual([expect.stringMatching(/the key "k" must be 32 bytes in base64/)]);
    expect(problemsOf({ TEMPORAL_PAYLOAD_KEYS: `k:${a},k:${b}` })).toEqual([
      'TEMPORAL_PAYLOAD_KEYS: "k" is listed twice',
    ]);
  });
});

describe('production settings', () => {
  it('boots with real secrets, and lists every unsafe one at once', () => {
    expect(loadConfig(productionEnv()).env).toBe('production');
    expect(
      problemsOf(
        productionEnv({
          API_KEYS: 'a:demo-secret',
          OPERATOR_KEYS: 'o:short-but-8',
          METRICS_TOKEN: 'tiny',
        }),
      ),
    ).toEqual([
      'API_KEYS: "a" is the public development value; set a secret of its own',
      'OPERATOR_KEYS: the secret of "o" must have at least 16 characters in production',
      'METRICS_TOKEN: the secret of "#1" must have at least 16 characters in production',
    ]);
  });

  it('keeps the codec role apart: its own keys, required in production while the endpoint is on', () => {
    const codec = (env: Record<string, string>) => loadConfig(env).codec;
    // The development key in development only; elsewhere no key decodes until one is set.
    expect([...codec({}).keys.keys()]).toEqual(['demo-codec']);
    expect(codec({ NODE_ENV: 'test' })).toEqual({ enabled: true, keys: new Map() });
    expect(codec(productionEnv()).keys).toEqual(
      new Map([['ui-proxy', 'prod-codec-secret-0123456789']]),
    );
    expect(problemsOf(productionEnv({ CODEC_KEYS: '' }))).toEqual([
      'CODEC_KEYS is required (id:secret,id:secret)',
    ]);
    expect(codec(productionEnv({ CODEC_KEYS: '', CODEC_ENDPOINT: 'false' }))).toEqual({
      enabled: false,
      keys: new Map(),
    });
    expect(problemsOf(productionEnv({ CODEC_KEYS: DEV_CODEC_KEYS }))).toEqual([
      'CODEC_KEYS: "demo-codec" is the public development value; set a secret of its own',
    ]);
    // One secret in two roles would let the operator key decode (or the UI proxy's refund).
    expect(
      problemsOf({
        OPERATOR_KEYS: 'ops:shared-secret-1',
        CODEC_KEYS: 'ui:shared-secret-1',
      }),
    ).toEqual(['CODEC_KEYS: "ui" has the secret of OPERATOR_KEYS "ops"; each role needs its own']);
    expect(problemsOf({ OPS_ACTOR: 'two words' })).toEqual([
      'OPS_ACTOR must be 1 to 64 of A-Z a-z 0-9 _ . @ -',
    ]);
  });

  it('needs no simulator secret unless the simulator is the provider', () => {
    expect(loadConfig(productionEnv()).simulator.enabled).toBe(false);
    expect(
      problemsOf(productionEnv({ PAYMENT_PROVIDER: 'simulator', ALLOW_SIMULATOR: 'true' })),
    ).toEqual(['SIMULATOR_WEBHOOK_SECRET is required']);
  });

  it('turns /docs off in production unless asked, and keeps the HTTP timeouts', () => {
    expect(loadConfig(productionEnv()).http).toMatchObject({
      docsEnabled: false,
      requestTimeoutMs: 30_000,
      connectionTimeoutMs: 60_000,
      keepAliveTimeoutMs: 72_000,
      trustProxy: false,
    });
    expect(loadConfig(productionEnv({ DOCS_ENABLED: 'true' })).http.docsEnabled).toBe(true);
    expect(loadConfig({}).http.docsEnabled).toBe(true);
  });
});

describe('production refuses test credentials and shared secrets', () => {
  const sandbox = {
    MIDTRANS_SERVER_KEYS: 'SB-Mid-server-abcdefghijklmnop',
    XENDIT_SECRET_KEY: 'xnd_development_abcdefghijklmnop',
    XENDIT_CALLBACK_TOKENS: 'xendit-callback-token-0123456789',
    STRIPE_SECRET_KEY: 'sk_test_abcdefghijklmnop',
  };

  it('refuses every sandbox key and URL unless a staging deployment allows them', () => {
    expect(
      problemsOf(
        productionEnv({ ...sandbox, MIDTRANS_BASE_URL: 'https://api.sandbox.midtrans.com' }),
      ),
    ).toEqual([
      'MIDTRANS_SERVER_KEYS: "#1" is a Midtrans sandbox key (SB-Mid-…)',
      'MIDTRANS_BASE_URL is the Midtrans sandbox (api.sandbox.midtrans.com)',
      'XENDIT_SECRET_KEY is a Xendit test-mode key (xnd_development_…)',
      'STRIPE_SECRET_KEY is a Stripe test-mode key (sk_test_…)',
      'Sandbox providers move no money: refused in production unless ALLOW_PROVIDER_SANDBOX=true (a staging deployment)',
    ]);
    expect(problemsOf(productionEnv({ STRIPE_SECRET_KEY: 'rk_test_abcdefghijklmnop' }))).toEqual([
      'STRIPE_SECRET_KEY is a Stripe test-mode key (rk_test_…)',
      'Sandbox providers move no money: refused in production unless ALLOW_PROVIDER_SANDBOX=true (a staging deployment)',
    ]);
    const staging = loadConfig(
      productionEnv({
        ...sandbox,
        MIDTRANS_BASE_URL: 'https://api.sandbox.midtrans.com',
        ALLOW_PROVIDER_SANDBOX: 'true',
      }),
    );
    expect(staging.payments.midtrans?.baseUrl).toBe('https://api.sandbox.midtrans.com');
    // Outside production the sandboxes are what one tests against.
    const development = loadConfig({ ...sandbox, STRIPE_WEBHOOK_SECRETS: 'whsec_test_secret' });
    expect(development.payments.stripe?.secretKey).toBe(sandbox.STRIPE_SECRET_KEY);
  });

  it("talks to Midtrans' production API in production, its sandbox elsewhere", () => {
    const keys = { MIDTRANS_SERVER_KEYS: 'Mid-server-abcdefghijklmnop' };
    expect(loadConfig(productionEnv(keys)).payments.midtrans?.baseUrl).toBe(
      'https://api.midtrans.com',
    );
    expect(loadConfig(keys).payments.midtrans?.baseUrl).toBe('https://api.sandbox.midtrans.com');
  });

  it('refuses one secret in two roles, naming the settings and ids, never the secret', () => {
    const shared = 'one-secret-for-everything-0123';
    const problems = problemsOf(
      productionEnv({
        API_KEYS: `shop:${shared}`,
        OPERATOR_KEYS: `ops:${shared}`,
        METRICS_TOKEN: 'scrape-token-0123456789',
        PAYMENT_PROVIDER: 'simulator',
        ALLOW_SIMULATOR: 'true',
        SIMULATOR_WEBHOOK_SECRET: `whsec_${Buffer.from('simulator-secret-0123').toString('base64')}`,
        XENDIT_SECRET_KEY: 'xnd_production_abcdefghijklmnop',
        XENDIT_CALLBACK_TOKENS: 'scrape-token-0123456789',
      }),
    );
    expect(problems).toEqual([
      'API_KEYS "shop" and OPERATOR_KEYS "ops" share one secret: give each role its own',
      'METRICS_TOKEN "#1" and XENDIT_CALLBACK_TOKENS "#1" share one secret: give each role its own',
    ]);
    expect(problems.join('\n')).not.toContain(shared);
    // Outside production the demo keys may be anything.
    expect(loadConfig({ API_KEYS: `a:${shared}`, OPERATOR_KEYS: `o:${shared}` }).env).toBe(
      'development',
    );
  });

  it('wants a metrics token for both processes in production', () => {
    expect(problemsOf(productionEnv({ METRICS_TOKEN: '' }))).toEqual([
      'METRICS_TOKEN is required in production: /metrics of the API and the worker answer only Authorization: Bearer <METRICS_TOKEN>',
    ]);
    expect(loadConfig({}).http.metricsToken).toBeUndefined();
  });
});

describe('trusted proxies', () => {
  it('trusts the listed addresses and CIDRs, and no proxy by default', () => {
    expect(loadConfig({}).http.trustProxy).toBe(false);
    expect(
      loadConfig(productionEnv({ TRUST_PROXY: '10.0.0.0/8, 192.0.2.7,2001:db8::/32' })).http
        .trustProxy,
    ).toEqual(['10.0.0.0/8', '192.0.2.7', '2001:db8::/32']);
  });

  it('refuses a bare true in production, and anything that is no address', () => {
    expect(problemsOf(productionEnv({ TRUST_PROXY: 'true' }))).toEqual([
      'TRUST_PROXY=true believes any X-Forwarded-For, so any client picks its own address: list the load balancer addresses or CIDRs instead',
    ]);
    expect(loadConfig({ TRUST_PROXY: 'true' }).http.trustProxy).toBe(true);
    expect(problemsOf({ TRUST_PROXY: '10.0.0.0/33,proxy.internal' })).toEqual([
      'TRUST_PROXY: "10.0.0.0/33" is no IP address or CIDR',
      'TRUST_PROXY: "proxy.internal" is no IP address or CIDR',
    ]);
  });
});
