import { readFileSync } from 'node:fs';
import http2 from 'node:http2';
import net from 'node:net';
import { isGrpcServiceError } from '@temporalio/client';
import type { Client } from '@temporalio/client';
import { isTlsOrFileMisconfiguration } from '../errors/misconfiguration';
import { messageWithCauses } from '../resilience/wait-until-up';
import { isNamespaceNotFound } from './namespace-not-found';
import type { TemporalConnectionConfig } from './temporal-connection';

/** gRPC codes that mean "these credentials are refused": no wait cures them. */
const GRPC_PERMISSION_DENIED = 7;
const GRPC_UNAUTHENTICATED = 16;

/**
 * How the worker's native connection (Rust core) words a refused certificate or credentials;
 * its errors carry no code, only tonic's and rustls' text.
 */
const NATIVE_REFUSAL = /InvalidCertificate|UnknownIssuer|Unauthenticated|PermissionDenied/;

/** The Temporal frontend's TLS does not work with this configuration. */
export class TemporalMisconfiguredError extends Error {
  override readonly name = 'TemporalMisconfiguredError';
}

/**
 * Opens one HTTP/2 connection to the frontend with the configured CA, server name and client
 * certificate, and waits for the server's first SETTINGS frame. The SDKs only say "failed to
 * connect before the deadline" whatever went wrong; Node's TLS says which: a certificate that
 * does not verify (a wrong CA or name, TLS to a plaintext port) is a
 * {@link TemporalMisconfiguredError}, a refused or unreachable address a plain error, which a
 * boot waits out. Plaintext configurations have nothing to verify here.
 */
export async function probeTemporalTls(
  config: TemporalConnectionConfig,
  timeoutMs = 5_000,
): Promise<void> {
  const { tls } = config;
  if (tls === false) return;
  const host = config.address.slice(0, config.address.lastIndexOf(':'));
  let options: http2.SecureClientSessionOptions;
  try {
    options = {
      ...(tls.caFile !== undefined && { ca: readFileSync(tls.caFile) }),
      ...(tls.certFile !== undefined &&
        tls.keyFile !== undefined && {
          cert: readFileSync(tls.certFile),
          key: readFileSync(tls.keyFile),
        }),
      ...((tls.serverName ?? (net.isIP(host) ? undefined : host)) !== undefined && {
        servername: tls.serverName ?? host,
      }),
    };
  } catch (error) {
    throw new TemporalMisconfiguredError(`a TLS file cannot be read: ${String(error)}`, {
      cause: error,
    });
  }
  await new Promise<void>((resolve, reject) => {
    const session = http2.connect(`https://${config.address}`, options);
    const timer = setTimeout(() => {
      finish(new Error(`no HTTP/2 answer from ${config.address} within ${timeoutMs} ms`));
    }, timeoutMs);
    const finish = (error?: Error) => {
      clearTimeout(timer);
      session.destroy();
      if (!error) resolve();
      else if (isTlsOrFileMisconfiguration(error)) {
        reject(
          new TemporalMisconfiguredError(`TLS to ${config.address} fails: ${error.message}`, {
            cause: error,
          }),
        );
      } else reject(error);
    };
    session.once('remoteSettings', () => {
      finish();
    });
    session.once('error', (error: Error) => {
      finish(error);
    });
    session.once('close', () => {
      finish(new Error(`${config.address} closed the connection after the TLS handshake`));
    });
  });
}

/**
 * What boot needs of Temporal: TLS that verifies, then the namespace described over the
 * client's own connection (which connects it now, not at the first donation).
 */
export async function checkTemporal(
  client: Client,
  config: TemporalConnectionConfig,
  timeoutMs = 5_000,
): Promise<void> {
  await probeTemporalTls(config, timeoutMs);
  await client.connection.withDeadline(Date.now() + timeoutMs, () =>
    client.workflowService.describeNamespace({ namespace: config.namespace }),
  );
}

/** Whether a failure to reach Temporal is a misconfiguration boot must not wait out. */
export function isTemporalMisconfiguration(error: unknown): boolean {
  if (error instanceof TemporalMisconfiguredError || isTlsOrFileMisconfiguration(error)) {
    return true;
  }
  for (let current: unknown = error, depth = 0; current instanceof Error && depth < 8; depth++) {
    if (isGrpcServiceError(current)) {
      const code: number = current.code;
      if (code === GRPC_UNAUTHENTICATED || code === GRPC_PERMISSION_DENIED) return true;
    }
    if (current.name === 'TransportError' && NATIVE_REFUSAL.test(current.message)) return true;
    current = current.cause;
  }
  return false;
}

/** A failure as boot logs it; a missing namespace says how to create it. */
export function describeTemporalFailure(error: unknown, namespace: string): string {
  const missing =
    isNamespaceNotFound(error) ||
    (error instanceof Error && error.message.includes('NamespaceNotFoundFailure'));
  if (missing) {
    return `namespace ${namespace} does not exist (yet): temporal operator namespace create -n ${namespace}`;
  }
  return messageWithCauses(error);
}
