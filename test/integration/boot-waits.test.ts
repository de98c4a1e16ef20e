import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import http2 from 'node:http2';
import type net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Connection } from '@temporalio/client';
import { msToTs } from '@temporalio/common/lib/time';
import { removeStoreFiles } from '../../src/idempotency/claims-location';
import { apiEnv, spawnApi } from '../support/api-process';
import { runUntilExit } from '../support/child-entry';
import { postDonation } from '../support/donations';
import { createCampaign, donationBody, eventually, startStack } from '../support/stack';
import type { Stack } from '../support/stack';
import { TcpProxy } from '../support/tcp-proxy';
import { testState } from '../support/test-env';
import { startMtlsTemporal } from '../support/tls';
import type { MtlsTemporal, TestPki, TlsTerminator } from '../support/tls';
import { spawnWorker, workerEnv } from '../support/worker-process';

const SERVER_NAME = 'temporal.galang.test';

/**
 * Boot with a dependency that is not up yet: the API and the worker wait for Postgres and
 * Temporal (and Temporal's namespace) with backoff and a bounded log, rather than exiting;
 * the API listens meanwhile, not ready. A misconfiguration (a CA that does not verify the
 * server, refused credentials) fails the boot at once, with its reason and exit code 78.
 */
describe('boot', () => {
  let stack: Stack;
  let pki: TestPki;
  let otherPki: TestPki;
  let terminator: TlsTerminator;
  let mtls: MtlsTemporal;
  const lmdbDirs: string[] = [];

  beforeAll(async () => {
    stack = await startStack({ noWorker: true });
    mtls = await startMtlsTemporal(SERVER_NAME);
    ({ pki, otherPki, terminator } = mtls);
  });
  afterAll(async () => {
    await mtls.close();
    for (const dir of lmdbDirs) removeStoreFiles(dir);
    await stack.stop();
  });

  /** An LMDB path of the API's own, so its claims are no other process's. */
  const lmdbPath = () => {
    const dir = path.join(os.tmpdir(), `galang-boot-${randomUUID()}`);
    lmdbDirs.push(dir);
    return dir;
  };
  const throughProxy = (databaseUrl: string, proxy: { address: string }) => {
    const url = new URL(databaseUrl);
    url.host = proxy.address;
    return url.toString();
  };
  const postgresProxy = () => {
    const url = new URL(testState().databaseUrl);
    return TcpProxy.start(`${url.hostname}:${url.port || 5432}`);
  };
  const waitLines = (lines: string[], what: string) =>
    lines.filter((line) => line.includes(`"waiting for ${what}"`));

  it('starts the API while Postgres is down: it listens, not ready, and boots once Postgres is back', async () => {
    const proxy = await postgresProxy();
    proxy.set('refuse');
    const api = await spawnApi(
      stack.config,
      { DATABASE_URL: throughProxy(stack.config.databaseUrl, proxy), LMDB_PATH: lmdbPath() },
      'listening',
    );
    try {
      const campaignId = await createCampaign(stack.db);
      await api.line((line) => line.includes('"waiting for Postgres"'));
      const starting = await fetch(`${api.url}/readyz`);
      expect(starting.status).toBe(503);
      expect(await starting.json()).toMatchObject({
        status: 'starting',
        checks: { postgres: 'down' },
      });
      const refused = await postDonation(api.url, `boot-${randomUUID()}`, donationBody(campaignId));
      expect(refused.status).toBe(503);
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
      expect((await fetch(`${api.url}/healthz`)).status).toBe(200);
      // Many attempts, one line: the wait does not flood the log.
      await eventually(async () => (proxy.connections >= 5 ? true : undefined));
      expect(waitLines(api.lines, 'Postgres')).toHaveLength(1);

      proxy.set('pass');
      await api.line((line) => line.includes('"api ready"'));
      expect(api.lines.some((line) => line.includes('"Postgres is up"'))).toBe(true);
      expect((await fetch(`${api.url}/readyz`)).status).toBe(200);
      const accepted = await postDonation(
        api.url,
        `boot-${randomUUID()}`,
        donationBody(campaignId),
      );
      expect(accepted.status).toBe(202);
    } finally {
      await api.stop();
      await proxy.close();
    }
  }, 120_000);

  it('starts the API while Temporal is down and connects it at boot', async () => {
    const proxy = await TcpProxy.start(testState().temporalAddress);
    proxy.set('refuse');
    const api = await spawnApi(
      stack.config,
      { TEMPORAL_ADDRESS: proxy.address, LMDB_PATH: lmdbPath() },
      'listening',
    );
    try {
      await api.line((line) => line.includes('"waiting for Temporal"'));
      const starting = await fetch(`${api.url}/readyz`);
      expect(starting.status).toBe(503);
      expect(await starting.json()).toMatchObject({
        status: 'starting',
        checks: { postgres: 'up', temporal: 'down' },
      });
      proxy.set('pass');
      await api.line((line) => line.includes('"api ready"'));
      expect((await fetch(`${api.url}/readyz`)).status).toBe(200);
    } finally {
      await api.stop();
      await proxy.close();
    }
  }, 120_000);

  it('starts the worker while Postgres is down and its namespace not created yet', async () => {
    const proxy = await postgresProxy();
    proxy.set('refuse');
    const namespace = `boot-${randomUUID()}`;
    const worker = await spawnWorker(stack, {
      env: {
        DATABASE_URL: throughProxy(stack.config.databaseUrl, proxy),
        TEMPORAL_NAMESPACE: namespace,
      },
      until: (line) => line.includes('"waiting for Postgres"'),
    });
    const connection = await Connection.connect({ address: testState().temporalAddress });
    try {
      proxy.set('pass');
      const waiting = await worker.line((line) => line.includes('"waiting for Temporal"'));
      expect((JSON.parse(waiting) as { reason: string }).reason).toContain(
        `namespace ${namespace} does not exist`,
      );
      await connection.workflowService.registerNamespace({
        namespace,
        workflowExecutionRetentionPeriod: msToTs('1 day'),
      });
      await worker.line((line) => line.includes('worker polling'), 90_000);
      expect(waitLines(worker.lines, 'Postgres')).toHaveLength(1);
    } finally {
      await worker.stop();
      await connection.close();
      await proxy.close();
    }
  }, 150_000);

  describe('a misconfiguration fails the boot at once, with its reason', () => {
    const tlsEnv = (ca: string) => ({
      TEMPORAL_ADDRESS: terminator.address,
      TEMPORAL_TLS_SERVER_CA_CERT_PATH: ca,
      TEMPORAL_TLS_SERVER_NAME: SERVER_NAME,
      TEMPORAL_TLS_CLIENT_CERT_PATH: pki.client.cert,
      TEMPORAL_TLS_CLIENT_KEY_PATH: pki.client.key,
    });

    it('a CA that does not verify the Temporal frontend, for the API and the worker', async () => {
      const [api, worker] = await Promise.all([
        runUntilExit('api', {
          ...apiEnv(stack.config),
          LMDB_PATH: lmdbPath(),
          ...tlsEnv(otherPki.ca),
        }),
        runUntilExit('worker', { ...workerEnv(stack), ...tlsEnv(otherPki.ca) }),
      ]);
      for (const result of [api, worker]) {
        expect(result.code).toBe(78);
        expect(result.stderr).toMatch(/Boot refused: Temporal: TLS to .* fails: .*certificate/);
      }
    }, 120_000);

    it('credentials Temporal refuses (an API key answered UNAUTHENTICATED)', async () => {
      const server = http2.createSecureServer({
        cert: readFileSync(pki.server.cert),
        key: readFileSync(pki.server.key),
      });
      server.on('stream', (stream) => {
        stream.respond(
          { ':status': 200, 'content-type': 'application/grpc', 'grpc-status': '16' },
          { endStream: true },
        );
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      const { port } = server.address() as net.AddressInfo;
      const env = {
        TEMPORAL_ADDRESS: `127.0.0.1:${port}`,
        TEMPORAL_API_KEY: 'refused-api-key-123',
        TEMPORAL_TLS_SERVER_CA_CERT_PATH: pki.ca,
        TEMPORAL_TLS_SERVER_NAME: SERVER_NAME,
      };
      try {
        const [api, worker] = await Promise.all([
          runUntilExit('api', { ...apiEnv(stack.config), LMDB_PATH: lmdbPath(), ...env }),
          runUntilExit('worker', { ...workerEnv(stack), ...env }),
        ]);
        for (const result of [api, worker]) {
          expect(result.code).toBe(78);
          expect(result.stderr).toMatch(
            /Boot refused: Temporal: .*(UNAUTHENTICATED|Unauthenticated)/,
          );
        }
      } finally {
        server.close();
      }
    }, 120_000);

    it('a Postgres role that does not exist', async () => {
      const url = new URL(stack.config.databaseUrl);
      url.username = `nobody_${randomUUID().slice(0, 8)}`;
      const result = await runUntilExit('api', {
        ...apiEnv(stack.config),
        LMDB_PATH: lmdbPath(),
        DATABASE_URL: url.toString(),
      });
      expect(result.code).toBe(78);
      expect(result.stderr).toMatch(/Boot refused: Postgres: .*role .* does not exist/);
    }, 60_000);
  });
});
