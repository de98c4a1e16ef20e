import { randomUUID } from 'node:crypto';
import http2 from 'node:http2';
import type net from 'node:net';
import { readFileSync } from 'node:fs';
import { Connection } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import { loadConfig } from '../../src/config/config';
import { createTemporalClient } from '../../src/temporal/temporal-client';
import { connectionOptions } from '../../src/temporal/temporal-connection';
import { postDonation, waitForStatus } from '../support/donations';
import { createCampaign, donationBody, startStack } from '../support/stack';
import { startMtlsTemporal } from '../support/tls';
import type { MtlsTemporal, TestPki, TlsTerminator } from '../support/tls';

const SERVER_NAME = 'temporal.galang.test';

/**
 * galang's Temporal connections over TLS, for real: the test makes a CA, a server and a client
 * certificate with openssl, puts a TLS terminator that demands the client certificate (mTLS) in
 * front of the dev server, and connects the same builders the entry points use.
 */
describe('Temporal over TLS', () => {
  let pki: TestPki;
  let otherPki: TestPki;
  let terminator: TlsTerminator;
  let mtls: MtlsTemporal;
  const tlsEnv = () => ({
    TEMPORAL_ADDRESS: terminator.address,
    TEMPORAL_TLS_SERVER_CA_CERT_PATH: pki.ca,
    TEMPORAL_TLS_SERVER_NAME: SERVER_NAME,
    TEMPORAL_TLS_CLIENT_CERT_PATH: pki.client.cert,
    TEMPORAL_TLS_CLIENT_KEY_PATH: pki.client.key,
  });
  const temporalConfig = (env: Record<string, string>) =>
    loadConfig({ NODE_ENV: 'test', ...env }).temporal;
  /** galang's connection options with a short connect timeout, for the refusals. */
  const connect = (env: Record<string, string>) =>
    Connection.connect({ ...connectionOptions(temporalConfig(env)), connectTimeout: 2_000 });

  beforeAll(async () => {
    mtls = await startMtlsTemporal(SERVER_NAME);
    ({ pki, otherPki, terminator } = mtls);
  });
  afterAll(async () => {
    await mtls.close();
  });

  it('connects the client with the CA, the server name and a client certificate', async () => {
    const client = createTemporalClient(temporalConfig(tlsEnv()));
    try {
      const { namespaceInfo } = await client.workflowService.describeNamespace({
        namespace: 'default',
      });
      expect(namespaceInfo?.name).toBe('default');
      expect(terminator.clientNames).toContain('galang-test-client');
    } finally {
      await client.connection.close();
    }
  });

  it('runs a whole donation with the API and the worker both on mTLS', async () => {
    const handshakes = terminator.connections;
    const stack = await startStack({ temporalAddress: terminator.address, env: tlsEnv() });
    try {
      expect(stack.config.temporal.tls).toMatchObject({ serverName: SERVER_NAME });
      const campaignId = await createCampaign(stack.db);
      const response = await postDonation(
        stack.apiUrl,
        `tls-${randomUUID()}`,
        donationBody(campaignId),
      );
      expect(response.status).toBe(202);
      const { id } = (await response.json()) as { id: string };
      await waitForStatus(stack, id, 'CONFIRMED');
      // At least the API's client and the worker's native connection came through it.
      expect(terminator.connections - handshakes).toBeGreaterThanOrEqual(2);
    } finally {
      await stack.stop();
    }
  });

  it('refuses a server it cannot verify and a client without a certificate', async () => {
    const refusedBefore = terminator.refused;
    // Plaintext to a TLS port; a CA that did not sign the server; the wrong name; no client cert.
    await expect(connect({ TEMPORAL_ADDRESS: terminator.address })).rejects.toThrow();
    await expect(
      connect({ ...tlsEnv(), TEMPORAL_TLS_SERVER_CA_CERT_PATH: otherPki.ca }),
    ).rejects.toThrow();
    await expect(
      connect({ ...tlsEnv(), TEMPORAL_TLS_SERVER_NAME: 'other.galang.test' }),
    ).rejects.toThrow();
    const noCert: Record<string, string> = tlsEnv();
    delete noCert.TEMPORAL_TLS_CLIENT_CERT_PATH;
    delete noCert.TEMPORAL_TLS_CLIENT_KEY_PATH;
    await expect(connect(noCert)).rejects.toThrow();
    expect(terminator.refused).toBeGreaterThan(refusedBefore);
  });

  it('sends the API key as a bearer token over TLS, from the client and the worker', async () => {
    // A TLS HTTP/2 server that only records what each connection's first call carries.
    const seen: (string | undefined)[] = [];
    const server = http2.createSecureServer({
      cert: readFileSync(pki.server.cert),
      key: readFileSync(pki.server.key),
    });
    server.on('stream', (stream, headers) => {
      seen.push(headers.authorization);
      stream.respond(
        { ':status': 200, 'content-type': 'application/grpc', 'grpc-status': '16' },
        { endStream: true },
      );
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as net.AddressInfo;
    try {
      const config = temporalConfig({
        TEMPORAL_ADDRESS: `127.0.0.1:${port}`,
        TEMPORAL_API_KEY: 'cloud-api-key-123',
        TEMPORAL_TLS_SERVER_CA_CERT_PATH: pki.ca,
        TEMPORAL_TLS_SERVER_NAME: SERVER_NAME,
      });
      const client = createTemporalClient(config);
      await expect(client.workflowService.getSystemInfo({})).rejects.toThrow();
      await client.connection.close();
      const byClient = seen.length;
      expect(byClient).toBeGreaterThan(0);
      await expect(NativeConnection.connect(connectionOptions(config))).rejects.toThrow();
      expect(seen.length).toBeGreaterThan(byClient);
      expect(new Set(seen)).toEqual(new Set(['Bearer cloud-api-key-123']));
    } finally {
      server.close();
    }
  });
});
