import fp from 'fastify-plugin';
import type {
  FastifyPluginAsync,
  FastifyRequest,
  onSendAsyncHookHandler,
  preHandlerAsyncHookHandler,
} from 'fastify';
import type { AuthRequirement, Principal } from '../auth/auth-plugin';
import { AppError } from '../errors/error-catalogue';
import { withHook } from '../http/route-hooks';
import type { AuditAction, AuditActor, AuditSubject } from './audit-entry';
import type { AuditRepository } from './audit-repository';

/** What a route records when an operator (or the codec role) calls it. */
export interface AuditRoute {
  action: AuditAction;
  /** On what, read from the validated request: ids and counts only. */
  subject?: (request: FastifyRequest) => AuditSubject;
}

declare module 'fastify' {
  interface FastifyContextConfig {
    audit?: AuditRoute;
  }
  interface FastifyRequest {
    /** The audit row of this request's action, until its outcome is recorded. */
    auditId: number | undefined;
  }
}

/** Routes these keys open must say what they record: forgetting is never an unrecorded action. */
const ADMITS_OPERATORS: ReadonlySet<AuthRequirement> = new Set([
  'operator',
  'client-or-operator',
  'codec',
]);

/** Operators and the codec role are recorded; clients are not. No key: the open dev codec. */
function actorOf(principal: Principal | undefined): AuditActor | undefined {
  if (principal === undefined) return { kind: 'anonymous', id: '-' };
  return principal.kind === 'client' ? undefined : { kind: principal.kind, id: principal.id };
}

/** The `code` of a problem answer, for a failed action's outcome. */
function problemCode(payload: unknown): string | undefined {
  if (typeof payload !== 'string') return undefined;
  try {
    const code = (JSON.parse(payload) as { code?: unknown }).code;
    return typeof code === 'string' ? code : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The audit log of the operators' HTTP actions. A route that admits operator or codec keys and
 * declares no `config.audit` is refused at registration. On such a route the action is
 * recorded in `preHandler`, after the key check, the rate limit and the idempotency claim (a
 * replayed answer repeats no action) and before the handler: when the row cannot be written
 * the request fails with 503 and nothing is done. The outcome (status, problem code) is written
 * in `onSend`, before the answer leaves; failing that only logs, as the action has happened.
 */
const auditPlugin: FastifyPluginAsync<{ audit: AuditRepository }> = async (app, { audit }) => {
  app.decorateRequest('auditId', undefined);

  const record =
    (declared: AuditRoute): preHandlerAsyncHookHandler =>
    async (request) => {
      const actor = actorOf(request.principal);
      if (actor === undefined) return;
      try {
        request.auditId = await audit.record({
          ...declared.subject?.(request),
          actor,
          action: declared.action,
          origin: 'http',
          requestId: request.id,
          address: request.ip,
        });
      } catch (error) {
        request.log.error({ err: error }, 'audit log unwritable: the action is refused');
        throw new AppError('service-unavailable', {
          retryAfter: 2,
          detail: 'The audit log cannot be written; nothing was done.',
          cause: error,
        });
      }
    };

  const settle: onSendAsyncHookHandler = async (request, reply, payload) => {
    const id = request.auditId;
    if (id === undefined) return payload;
    request.auditId = undefined;
    const status = reply.statusCode;
    const failed = status >= 400;
    try {
      await audit.settle(id, {
        outcome: failed ? 'failed' : 'succeeded',
        status,
        error: failed ? problemCode(payload) : undefined,
      });
    } catch (error) {
      request.log.error({ err: error, auditId: id }, 'audit outcome not recorded');
    }
    return payload;
  };

  app.addHook('onRoute', (route) => {
    const declared = route.config?.audit;
    const auth = route.config?.auth;
    if (declared === undefined) {
      if (auth !== undefined && ADMITS_OPERATORS.has(auth)) {
        throw new Error(
          `${String(route.method)} ${route.url} admits operators but declares no audit`,
        );
      }
      return;
    }
    route.preHandler = withHook(route.preHandler, record(declared));
    route.onSend = withHook(route.onSend, settle);
  });
};

export default fp(auditPlugin, { name: 'audit', dependencies: ['auth'] });
