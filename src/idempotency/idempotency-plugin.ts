import fp from 'fastify-plugin';
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../errors/error-catalogue';
import { fingerprint } from './fingerprint';
import { parseIdempotencyKey, scopedKey } from './idempotency-key';
import type { IdempotencyScope } from './idempotency-key';
import type { IdempotencyRecord, IdempotencyStore } from './idempotency-store';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The route requires an Idempotency-Key and is answered at most once per key. */
    idempotent?: boolean;
  }
  interface FastifyRequest {
    idempotency: IdempotencyContext | undefined;
  }
}

export interface IdempotencyContext {
  scope: IdempotencyScope;
  key: string;
  claimId?: string;
}

/** Response headers that are part of the stored answer and are replayed as they were. */
const KEPT_HEADERS = ['content-type', 'location'];

/** Transient outcomes are not stored: the client's retry with the same key must run again. */
function isCacheable(statusCode: number): boolean {
  if (statusCode >= 200 && statusCode < 300) return true;
  return statusCode >= 400 && statusCode < 500 && ![408, 409, 425, 429].includes(statusCode);
}

/**
 * Idempotent POSTs: parse the key before anything touches the store, claim it after the body
 * validated, replay a completed answer, refuse a concurrent or mismatched one, and store the
 * final answer (or release the claim) on the way out.
 */
const idempotencyPlugin: FastifyPluginAsync<{ store: IdempotencyStore }> = async (
  app,
  { store },
) => {
  app.decorateRequest('idempotency', undefined);

  app.addHook('preValidation', async (request) => {
    if (!request.routeOptions.config.idempotent) return;
    const principal = request.principal;
    if (!principal) throw new AppError('unauthorized');
    const key = parseIdempotencyKey(request.headers['idempotency-key']);
    const scope = {
      clientId: principal.id,
      method: request.method,
      route: request.routeOptions.url ?? request.url,
      key,
    };
    request.idempotency = { scope, key: scopedKey(scope) };
  });

  app.addHook('preHandler', async (request, reply) => {
    const context = request.idempotency;
    if (!context) return;
    const print = fingerprint(request.body);
    const result = await store.claim(context.key, print);
    if (result.outcome === 'claimed') {
      context.claimId = result.claimId;
      return;
    }
    answerExisting(reply, result.record, print);
    return reply;
  });

  app.addHook('onSend', async (request, reply, payload) => {
    const context = request.idempotency;
    if (!context?.claimId) return payload;
    const { claimId } = context;
    context.claimId = undefined;
    if (isCacheable(reply.statusCode) && typeof payload === 'string') {
      const headers: Record<string, string> = {};
      for (const name of KEPT_HEADERS) {
        const value = reply.getHeader(name);
        if (value !== undefined) headers[name] = String(value);
      }
      await store.complete(context.key, claimId, {
        statusCode: reply.statusCode,
        headers,
        body: payload,
      });
    } else {
      await store.release(context.key, claimId);
    }
    return payload;
  });

  // A client that disconnects mid-request still must not leave its key claimed forever.
  app.addHook('onRequestAbort', async (request: FastifyRequest) => {
    const context = request.idempotency;
    if (context?.claimId) await store.release(context.key, context.claimId);
  });
};

function answerExisting(reply: FastifyReply, record: IdempotencyRecord, print: string): void {
  if (record.fingerprint !== print) throw new AppError('idempotency-key-mismatch');
  if (record.status === 'IN_FLIGHT') {
    const seconds = Math.max(1, Math.ceil((record.leaseUntil - Date.now()) / 1000));
    throw new AppError('idempotency-key-in-use', { retryAfter: Math.min(seconds, 5) });
  }
  const { response } = record;
  void reply
    .code(response.statusCode)
    .headers(response.headers)
    .header('idempotent-replayed', 'true')
    .send(response.body);
}

export default fp(idempotencyPlugin, { name: 'idempotency', dependencies: ['auth'] });
