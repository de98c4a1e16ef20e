import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { run } from './commands';

export interface CertificatePair {
  cert: string;
  key: string;
}

/** The stack's certificates: one CA, and a certificate for each party to a Temporal connection. */
export interface StackPki {
  ca: string;
  /** The frontend's server certificate, for {@link StackPki.frontendName} and 127.0.0.1. */
  frontend: CertificatePair;
  frontendName: string;
  /** History, matching and the frontend among themselves: server and client at once. */
  internode: CertificatePair;
  internodeName: string;
  /** Temporal's own system worker, a client of its frontend. */
  systemWorker: CertificatePair;
  /** Client certificates by role: galang's API, galang's worker, the operator's CLI. */
  clients: Record<'api' | 'worker' | 'operator', CertificatePair>;
}

const LEAF = 'basicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature\n';

/**
 * Makes the stack's CA and certificates with openssl (P-256, valid 30 days), with the
 * extensions strict verifiers insist on (rustls in the worker's core, grpc-js, Go's crypto/tls):
 * every connection to and inside Temporal is mutual TLS, so only holders of these reach it.
 */
export function makeStackPki(dir: string, domain: string): StackPki {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const file = (name: string) => path.join(dir, name);
  const openssl = (...args: string[]) => run('openssl', args);
  const ecKey = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes'];
  openssl(
    'req',
    '-x509',
    ...ecKey,
    '-keyout',
    file('ca.key'),
    '-out',
    file('ca.pem'),
    '-days',
    '30',
    '-subj',
    `/CN=galang stack CA ${domain}`,
    '-addext',
    'basicConstraints=critical,CA:TRUE',
    '-addext',
    'keyUsage=critical,keyCertSign,cRLSign',
  );
  const issue = (name: string, cn: string, usage: string, altNames: string): CertificatePair => {
    writeFileSync(
      file(`${name}.ext`),
      `${LEAF}extendedKeyUsage=${usage}\nsubjectAltName=${altNames}\n`,
    );
    openssl(
      'req',
      ...ecKey,
      '-keyout',
      file(`${name}.key`),
      '-out',
      file(`${name}.csr`),
      '-subj',
      `/CN=${cn}`,
    );
    openssl(
      'x509',
      '-req',
      '-in',
      file(`${name}.csr`),
      '-CA',
      file('ca.pem'),
      '-CAkey',
      file('ca.key'),
      '-CAcreateserial',
      '-out',
      file(`${name}.pem`),
      '-days',
      '30',
      '-extfile',
      file(`${name}.ext`),
    );
    return { cert: file(`${name}.pem`), key: file(`${name}.key`) };
  };
  const client = (name: string) => {
    const cn = `${name}.${domain}`;
    return issue(name, cn, 'clientAuth', `DNS:${cn}`);
  };
  const frontendName = `frontend.${domain}`;
  const internodeName = `internode.${domain}`;
  return {
    ca: file('ca.pem'),
    frontendName,
    frontend: issue('frontend', frontendName, 'serverAuth', `DNS:${frontendName},IP:127.0.0.1`),
    internodeName,
    internode: issue(
      'internode',
      internodeName,
      'serverAuth,clientAuth',
      `DNS:${internodeName},IP:127.0.0.1`,
    ),
    systemWorker: client('system-worker'),
    clients: {
      api: client('galang-api'),
      worker: client('galang-worker'),
      operator: client('operator'),
    },
  };
}
