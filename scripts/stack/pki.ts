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
const EC_KEY = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes'];

/** A CA in a folder, and what issues its leaf certificates. */
export interface CertificateAuthority {
  ca: string;
  /** A leaf for `cn` with these extended key usages (`serverAuth,clientAuth`) and SANs. */
  issue: (name: string, cn: string, usage: string, altNames: string) => CertificatePair;
}

/**
 * Makes a CA with openssl (P-256, valid `days`), issuing leaves with the extensions strict
 * verifiers insist on (rustls in the worker's core, grpc-js, Go's crypto/tls). The stack and
 * the TLS tests both make their certificates here.
 */
export function makeCertificateAuthority(
  dir: string,
  name: string,
  days: number,
): CertificateAuthority {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const file = (base: string) => path.join(dir, base);
  const openssl = (...args: string[]) => run('openssl', args);
  const validity = ['-days', String(days)];
  openssl(
    'req',
    '-x509',
    ...EC_KEY,
    '-keyout',
    file('ca.key'),
    '-out',
    file('ca.pem'),
    ...validity,
    '-subj',
    `/CN=${name}`,
    '-addext',
    'basicConstraints=critical,CA:TRUE',
    '-addext',
    'keyUsage=critical,keyCertSign,cRLSign',
  );
  const issue = (leaf: string, cn: string, usage: string, altNames: string): CertificatePair => {
    writeFileSync(
      file(`${leaf}.ext`),
      `${LEAF}extendedKeyUsage=${usage}\nsubjectAltName=${altNames}\n`,
    );
    openssl(
      'req',
      ...EC_KEY,
      '-keyout',
      file(`${leaf}.key`),
      '-out',
      file(`${leaf}.csr`),
      '-subj',
      `/CN=${cn}`,
    );
    openssl(
      'x509',
      '-req',
      '-in',
      file(`${leaf}.csr`),
      '-CA',
      file('ca.pem'),
      '-CAkey',
      file('ca.key'),
      '-CAcreateserial',
      '-out',
      file(`${leaf}.pem`),
      ...validity,
      '-extfile',
      file(`${leaf}.ext`),
    );
    return { cert: file(`${leaf}.pem`), key: file(`${leaf}.key`) };
  };
  return { ca: file('ca.pem'), issue };
}

/**
 * The stack's CA and certificates (valid 30 days): every connection to and inside Temporal is
 * mutual TLS, so only holders of these reach it.
 */
export function makeStackPki(dir: string, domain: string): StackPki {
  const { ca, issue } = makeCertificateAuthority(dir, `galang stack CA ${domain}`, 30);
  const client = (name: string) => {
    const cn = `${name}.${domain}`;
    return issue(name, cn, 'clientAuth', `DNS:${cn}`);
  };
  const frontendName = `frontend.${domain}`;
  const internodeName = `internode.${domain}`;
  return {
    ca,
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
