import { types } from 'node:util';

/**
 * OpenSSL's and Node's codes for a peer whose certificate does not verify, and for a TLS
 * handshake that cannot work (e.g. TLS to a plaintext port): a wrong CA, server name or
 * protocol, which no retry cures.
 */
const CERTIFICATE_CODES = new Set([
  'SELF_SIGNED_CERT_IN_CHAIN',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'CERT_HAS_EXPIRED',
  'CERT_NOT_YET_VALID',
  'CERT_SIGNATURE_FAILURE',
  'CERT_UNTRUSTED',
  'CERT_REJECTED',
  'HOSTNAME_MISMATCH',
]);

/** A configured file (a CA, a certificate, a key) that cannot be read. */
const FILE_CODES = new Set(['ENOENT', 'EACCES', 'EISDIR']);

/**
 * Whether `error` (or one of its causes) says the configuration is wrong rather than the peer
 * away: a certificate that does not verify, a TLS handshake that cannot succeed, a configured
 * file that cannot be read. Boot fails on these instead of waiting.
 */
export function isTlsOrFileMisconfiguration(error: unknown): boolean {
  for (let current = error, depth = 0; types.isNativeError(current) && depth < 8; depth += 1) {
    const { code } = current as NodeJS.ErrnoException;
    if (typeof code === 'string') {
      if (CERTIFICATE_CODES.has(code) || FILE_CODES.has(code)) return true;
      if (code.startsWith('ERR_TLS_') || code.startsWith('ERR_SSL_')) return true;
    }
    current = current.cause;
  }
  return false;
}
