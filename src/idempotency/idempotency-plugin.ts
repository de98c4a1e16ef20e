import fp from 'fastify-plugin';
import type {
  FastifyPluginAsync,
  FastifyReply,
  FastifyRequest,
  onRequestAsyncHookHandler,
  onSendAsyncHookHandler,
  preHandlerAsyncHookHandler,
  preValidationAsyncHookHandler,
} from 'fastify';
import { AppError } from '../errors/error-catalogue';
import { PROBLEM_CONTENT_TYPE, problemOf } from '../errors/problem';
import type { IdempotencyMetrics } from '../observability/metrics';
import { fingerprint } from './fingerprint';
import { parseIdempotencyKey, scopedKey } from './idempotency-key';
import type { IdempotencyScope } from './idempotency-key';
import type { ClaimResult, IdempotencyRecord } from './idempotency-record';
import type { IdempotencyStore } from './idempotency-store';
import { withHook } from '../http/route-hooks';
import { keepJsonBodies, rawDigestOf } from './request-bytes';
import type { RequestBytes } from './request-bytes';
import { StoreWriteError } from './store-write-error';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The route requires an Idempotency-Key and is answered at most once per key. */
    idempotent?: boolean;
  }
  interface FastifyRequest {
    idempotency: IdempotencyContext | undefined;
  }
}

/** One idempotent request; its JSON body's bytes are kept (`RequestBytes`) to recognize a retry. */
export interface IdempotencyContext extends RequestBytes {
  scope: IdempotencyScope;
  key: string;
  /** SHA-256 of the canonical body; computed only when the raw bytes do not decide. */
  fingerprint: string | undefined;
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
const KEPT_HEADERS = ['content-type', 'location', 'retry-after'];

/** Seconds a client waits before retrying while the store cannot write (a disk filling up). */
const STORE_RETRY_AFTER_SECONDS = 5;

/** The answer while the store cannot write: nothing was kept, the same key may be sent again. */
function storeUnavailable(cause: StoreWriteError): AppError {
  return new AppError('service-unavailable', {
    detail: `This node cannot record requests now (its ${cause.environment} store cannot write); retry with the same Idempotency-Key.`,
    retryAfter: STORE_RETRY_AFTER_SECONDS,
    cause,
  });
}

/** Transient outcomes are not stored: the client's retry with the same key must run again. */
function isCacheable(statusCode: number): boolean {
  if (statusCode >= 200 && statusCode < 300) return true;
  return statusCode >= 400 && statusCode < 500 && ![408, 409, 425, 429].includes(statusCode);
}

/** The canonical fingerprint, computed once per request. */
function canonicalOf(context: IdempotencyContext, body: unknown): string {
  if (context.fingerprint === undefined) {
    try {
      context.fingerprint = fingerprint(body);
    } catch {
      throw new AppError('validation-failed', { detail: 'The body cannot be fingerprinted.' });
    }
  }
  return context.fingerprint;
}

/**
 * Idempotent POSTs. The hooks are attached only to routes with `config.idempotent`, at
 * registration, so other routes pay nothing:
 * - onRequest (after auth): parse the key, before the body is read or the store touched.
 * - content-type parser: keep the JSON body's bytes beside the parsed body.
 * - preValidation: answer from a live record with one LMDB read (replay, 409 or 422). A replay
 *   is not validated: it is answered with what the original request was answered.
 * - preHandler (body valid): claim the key in one conditional write, or take over the claim of
 *   a process that died holding it.
 * - onSend: store a final answer and flush it, or release the claim after a transient failure.
 *
 * "Same request" means the same canonical body (sorted keys, normalized numbers and strings).
 * A retry with byte-identical bytes is recognized by the bytes alone, the common case.
 */
const idempotencyPlugin: FastifyPluginAsync<IdempotencyPluginOptions> = async (app, options) => {
  const { store, metrics } = options;
  app.decorateRequest('idempotency', undefined);
  keepJsonBodies(app, (request) => request.idempotency);

  const onRequest =
    (route: string): onRequestAsyncHookHandler =>
    async (request) => {
      const principal = request.principal;
      if (!principal) throw new AppError('unauthorized');
      const key = parseIdempotencyKey(request.headers['idempotency-key']);
      const scope = { clientId: principal.id, method: request.method, route, key };
      request.idempotency = {
        scope,
        key: scopedKey(scope),
        rawBody: undefined,
        rawDigest: undefined,
        fingerprint: undefined,
      };
    };

  const preValidation: preValidationAsyncHookHandler = async (request, reply) => {
    const context = request.idempotency as IdempotencyContext;
    const existing = store.get(context.key);
    if (existing) return answerExisting(request, reply, existing);
  };

  const preHandler: preHandlerAsyncHookHandler = async (request, reply) => {
    const context = request.idempotency;
    if (!context) return;
    const print = canonicalOf(context, request.body);
    const rawDigest = rawDigestOf(context);
    let result: ClaimResult;
    try {
      result = context.staleClaimId
        ? await store.takeOver(context.key, context.staleClaimId)
        : await store.claim(context.key, print, rawDigest);
      // The record vanished between our read and our write (its owner released it): claim anew.
      if (result.outcome === 'lost') result = await store.claim(context.key, print, rawDigest);
    } catch (error) {
      if (!(error instanceof StoreWriteError)) throw error;
      metrics.storeWriteFailures.inc({ environment: error.environment });
      request.log.error({ err: error }, 'the idempotency store cannot claim a key');
      throw storeUnavailable(error);
    }
    if (result.outcome === 'claimed') {
      context.claimId = result.claimId;
      (context.staleClaimId ? metrics.recoveries : metrics.claims).inc();
      releaseOnHangUp(request, reply, context);
      return;
    }
    if (result.outcome === 'exists') return answerExisting(request, reply, result.record, true);
    throw new AppError('idempotency-key-in-use', { retryAfter: 1 });
  };

  /**
   * A client that hangs up before its answer must not leave its key claimed until the lease
   * ends. Listened for only once a claim is held, so replays and refusals pay nothing for it.
   */
  const releaseOnHangUp = (
    request: FastifyRequest,
    reply: FastifyReply,
    context: IdempotencyContext,
  ) => {
    const response = reply.raw;
    response.once('close', () => {
      const { claimId } = context;
      if (response.writableFinished || !claimId) return;
      context.claimId = undefined;
      store.releaseOrAbandon(context.key, claimId).catch((error: unknown) => {
        request.log.warn({ err: error }, 'could not release the claim of an aborted request');
      });
    });
  };

  /**
   * Stores a final answer (flushed before it is sent) or releases the claim. When a take-over
   * stored another answer for the key meanwhile, that one is sent: one key, one answer. When the
   * answer cannot be stored, the claim is released all the same and the client gets a 503 with
   * Retry-After instead: its retry runs again and re-attaches to the same donation.
   */
  const onSend: onSendAsyncHookHandler = async (request, reply, payload) => {
    const context = request.idempotency;
    const claimId = context?.claimId;
    if (!context || !claimId) return payload;
    context.claimId = undefined;
    if (isCacheable(reply.statusCode) && typeof payload === 'string') {
      const headers: Record<string, string> = {};
      for (const name of KEPT_HEADERS) {
        const value = reply.getHeader(name);
        if (value !== undefined) headers[name] = String(value);
      }
      let stored: boolean;
      try {
        stored = await store.complete(context.key, claimId, {
          statusCode: reply.statusCode,
          headers,
          body: payload,
        });
      } catch (error) {
        if (!(error instanceof StoreWriteError)) throw error;
        metrics.storeWriteFailures.inc({ environment: error.environment });
        request.log.error({ err: error }, 'the idempotency store cannot keep an answer');
        return sendInstead(request, reply, storeUnavailable(error));
      }
      return stored ? payload : (theKeysAnswer(request, reply, context) ?? payload);
    }
    await store.releaseOrAbandon(context.key, claimId);
    metrics.releases.inc();
    return payload;
  };

  /** Replaces the answer being sent with a problem (the headers of the stored answer go). */
  const sendInstead = (request: FastifyRequest, reply: FastifyReply, error: AppError): string => {
    for (const name of KEPT_HEADERS) reply.removeHeader(name);
    reply.code(error.status).type(PROBLEM_CONTENT_TYPE);
    if (error.retryAfter !== undefined) reply.header('retry-after', String(error.retryAfter));
    return JSON.stringify(problemOf(error, request.url));
  };

  /**
   * Our claim was taken over while we worked (our lease ran out): we send the answer stored by
   * the request that took over, or, while it still runs, a 409 that makes the client come back
   * for it. Nothing stored at all: ours stands.
   */
  const theKeysAnswer = (
    request: FastifyRequest,
    reply: FastifyReply,
    context: IdempotencyContext,
  ): string | undefined => {
    const record = store.get(context.key);
    if (!record) return undefined;
    for (const name of KEPT_HEADERS) reply.removeHeader(name);
    if (record.status === 'COMPLETED') {
      const { response } = record;
      reply.code(response.statusCode).headers(response.headers);
      reply.header('idempotent-replayed', 'true');
      return response.body;
    }
    return sendInstead(request, reply, new AppError('idempotency-key-in-use', { retryAfter: 1 }));
  };

  app.addHook('onRoute', (route) => {
    if (!route.config?.idempotent) return;
    route.onRequest = withHook(route.onRequest, onRequest(route.url));
    route.preValidation = withHook(route.preValidation, preValidation);
    route.preHandler = withHook(route.preHandler, preHandler);
    route.onSend = withHook(route.onSend, onSend);
  });

  /** Whether the request is the one the record was made for: its bytes, else its meaning. */
  function sameRequest(request: FastifyRequest, record: IdempotencyRecord): boolean {
    const context = request.idempotency as IdempotencyContext;
    return sameBytes(context, record) || record.fingerprint === canonicalOf(context, request.body);
  }

  /**
   * Whether the body's bytes are the original request's. Bytes that matched a COMPLETED record
   * are kept beside the store's copy of it, so a storm of retries costs no digest each.
   */
  function sameBytes(context: IdempotencyContext, record: IdempotencyRecord): boolean {
    const raw = context.rawBody;
    if (raw === undefined) return false;
    const completed = record.status === 'COMPLETED';
    if (completed && store.knownBytes(context.key) === raw) return true;
    if (record.rawDigest !== rawDigestOf(context)) return false;
    if (completed) store.rememberBytes(context.key, raw);
    return true;
  }

  /**
   * Answers from an existing record, or marks a dead claimant's record for takeover. Returns the
   * reply when it has answered, so the hook chain stops.
   */
  function answerExisting(
    request: FastifyRequest,
    reply: FastifyReply,
    record: IdempotencyRecord,
    afterClaimAttempt = false,
  ): FastifyReply | undefined {
    const context = request.idempotency as IdempotencyContext;
    if (!sameRequest(request, record)) {
      metrics.mismatches.inc();
      throw new AppError('idempotency-key-mismatch');
    }
    if (record.status === 'IN_FLIGHT') {
      // Its lease is over, or its holder died on this host: a retry need not wait.
      if (!afterClaimAttempt && store.mayTakeOver(record)) {
        context.staleClaimId = record.owner.claimId;
        return undefined;
      }
      const leaseLeftMs = record.leaseUntil - Date.now();
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
