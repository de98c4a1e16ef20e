import fp from 'fastify-plugin';
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../errors/error-catalogue';
import type { IdempotencyMetrics } from '../observability/metrics';
import { fingerprint } from './fingerprint';
import { parseIdempotencyKey, scopedKey } from './idempotency-key';
import type { IdempotencyScope } from './idempotency-key';
import type { ClaimResult, IdempotencyRecord, IdempotencyStore } from './idempotency-store';

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
  fingerprint: string;
  /** A dead claimant's claim this request will try to take over. */
  staleClaimId?: string;
  /** Our claim, once acquired; cleared when completed or released. */
  claimId?: string;
}

export interface IdempotencyPluginOptions {
  store: IdempotencyStore;
  metrics: IdempotencyMetrics;
}

/** Response headers that are part of the stored answer and are replayed as they were. */
const KEPT_HEADERS = ['content-type', 'location'];

/** Transient outcomes are not stored: the client's retry with the same key must run again. */
function isCacheable(statusCode: number): boolean {
  if (statusCode >= 200 && statusCode < 300) return true;
  return statusCode >= 400 && statusCode < 500 && ![408, 409, 425, 429].includes(statusCode);
}

/**
 * Idempotent POSTs, in three steps:
 * - preValidation: parse the key (before any store access), fingerprint the parsed body and
 *   answer from a live record with one LMDB read: replay, 409 or 422. Replays skip validation.
 * - preHandler (body valid): claim the key in one conditional write, or take over the claim of
 *   a process that died holding it.
 * - onSend: store a final answer and flush it, or release the claim after a transient failure.
 */
const idempotencyPlugin: FastifyPluginAsync<IdempotencyPluginOptions> = async (app, options) => {
  const { store, metrics } = options;
  app.decorateRequest('idempotency', undefined);

  app.addHook('preValidation', async (request, reply) => {
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
    let print: string;
    try {
      print = fingerprint(request.body);
    } catch {
      throw new AppError('validation-failed', { detail: 'The body cannot be fingerprinted.' });
    }
    const context: IdempotencyContext = { scope, key: scopedKey(scope), fingerprint: print };
    request.idempotency = context;
    const existing = store.get(context.key);
    if (existing) return answerExisting(context, existing, reply);
  });

  app.addHook('preHandler', async (request, reply) => {
    const context = request.idempotency;
    if (!context) return;
    let result: ClaimResult = context.staleClaimId
      ? await store.takeOver(context.key, context.staleClaimId)
      : await store.claim(context.key, context.fingerprint);
    // The record vanished between our read and our write (its owner released it): claim anew.
    if (result.outcome === 'lost') result = await store.claim(context.key, context.fingerprint);
    if (result.outcome === 'claimed') {
      context.claimId = result.claimId;
      (context.staleClaimId ? metrics.recoveries : metrics.claims).inc();
      return;
    }
    if (result.outcome === 'exists') return answerExisting(context, result.record, reply, true);
    throw new AppError('idempotency-key-in-use', { retryAfter: 1 });
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
      metrics.releases.inc();
    }
    return payload;
  });

  // A client that hangs up mid-request must not leave its key claimed until the lease ends.
  app.addHook('onRequestAbort', async (request: FastifyRequest) => {
    const context = request.idempotency;
    if (context?.claimId) await store.release(context.key, context.claimId);
  });

  /**
   * Answers from an existing record, or marks a dead claimant's record for takeover. Returns the
   * reply when it has answered, so the hook chain stops.
   */
  function answerExisting(
    context: IdempotencyContext,
    record: IdempotencyRecord,
    reply: FastifyReply,
    afterClaimAttempt = false,
  ): FastifyReply | undefined {
    if (record.fingerprint !== context.fingerprint) {
      metrics.mismatches.inc();
      throw new AppError('idempotency-key-mismatch');
    }
    if (record.status === 'IN_FLIGHT') {
      const leaseLeftMs = record.leaseUntil - Date.now();
      if (leaseLeftMs <= 0 && !afterClaimAttempt) {
        context.staleClaimId = record.owner.claimId;
        return undefined;
      }
      metrics.conflicts.inc();
      throw new AppError('idempotency-key-in-use', {
        retryAfter: Math.min(Math.max(1, Math.ceil(leaseLeftMs / 1000)), 5),
      });
    }
    metrics.replays.inc();
    const { response } = record;
    return reply
      .code(response.statusCode)
      .headers(response.headers)
      .header('idempotent-replayed', 'true')
      .send(response.body);
  }
};

export default fp(idempotencyPlugin, { name: 'idempotency', dependencies: ['auth'] });
