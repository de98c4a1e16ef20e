import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import tls from 'node:tls';
import { makeCertificateAuthority } from '../../scripts/stack/pki';
import { testState } from './test-env';

/** PEM files of a throwaway CA and the certificates it issued, in a temporary folder. */
export interface TestPki {
  dir: string;
  ca: string;
  server: { cert: string; key: string };
  client: { cert: string; key: string };
  remove(): void;
}

/**
 * A CA made for one test run (valid one day, scripts/stack/pki.ts), a server certificate for
 * `serverName` and a client certificate for mTLS.
 */
export function makeTestPki(serverName: string, clientName = 'galang-test-client'): TestPki {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'galang-pki-'));
  const { ca, issue } = makeCertificateAuthority(dir, 'galang test CA', 1);
  return {
    dir,
    ca,
    server: issue('server', serverName, 'serverAuth', `DNS:${serverName}`),
    client: issue('client', clientName, 'clientAuth', `DNS:${clientName}`),
    remove: () => {
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export interface TlsTerminator {
  address: string;
  /** Common names of the client certificates of the connections it let through. */
  clientNames: Set<string>;
  /** Connections it let through. */
  connections: number;
  /** Connections refused during the handshake (no or untrusted client certificate, …). */
  refused: number;
  close(): Promise<void>;
}

/**
 * A TLS terminator in front of a plaintext server, which is how a TLS Temporal frontend is tested
 * here: the CLI's dev server (v1.5.1) has no TLS flags. It negotiates HTTP/2 by ALPN as gRPC
 * needs, and with `clientCa` demands a client certificate issued by it (mTLS).
 */
export async function startTlsTerminator(options: {
  upstream: string;
  cert: string;
  key: string;
  clientCa?: string;
}): Promise<TlsTerminator> {
  const index = options.upstream.lastIndexOf(':');
  const upstream = {
    host: options.upstream.slice(0, index),
    port: Number(options.upstream.slice(index + 1)),
  };
  const sockets = new Set<net.Socket>();
  const state = { clientNames: new Set<string>(), connections: 0, refused: 0 };
  const server = tls.createServer(
    {
      cert: readFileSync(options.cert),
      key: readFileSync(options.key),
      ALPNProtocols: ['h2'],
      ...(options.clientCa && {
        ca: readFileSync(options.clientCa),
        requestCert: true,
        rejectUnauthorized: true,
      }),
    },
    (client) => {
      const name: unknown = client.getPeerCertificate().subject.CN;
      if (typeof name === 'string') state.clientNames.add(name);
      state.connections++;
      const plain = net.connect(upstream);
      for (const socket of [client, plain]) {
        sockets.add(socket);
        socket.on('error', () => undefined);
        socket.on('close', () => {
          sockets.delete(socket);
          client.destroy();
          plain.destroy();
        });
      }
      client.pipe(plain).pipe(client);
    },
  );
  server.on('tlsClientError', () => {
    state.refused++;
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  return Object.assign(state, {
    address: `127.0.0.1:${port}`,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => {
        server.close(() => {
          resolve();
        });
      });
    },
  });
}

/** The dev server behind an mTLS terminator, with its CA and another, untrusted one. */
export interface MtlsTemporal {
  pki: TestPki;
  /** Certificates of a CA the terminator does not trust. */
  otherPki: TestPki;
  terminator: TlsTerminator;
  close(): Promise<void>;
}

/** Puts the test run's Temporal dev server behind mutual TLS for `serverName`. */
export async function startMtlsTemporal(serverName: string): Promise<MtlsTemporal> {
  const pki = makeTestPki(serverName);
  const otherPki = makeTestPki(serverName);
  const terminator = await startTlsTerminator({
    upstream: testState().temporalAddress,
    cert: pki.server.cert,
    key: pki.server.key,
    clientCa: pki.ca,
  });
  return {
    pki,
    otherPki,
    terminator,
    close: async () => {
      await terminator.close();
      pki.remove();
      otherPki.remove();
    },
  };
}
