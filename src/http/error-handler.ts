import fp from 'fastify-plugin';
import type { FastifyError, FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../errors/error-catalogue';
import { PROBLEM_CONTENT_TYPE, problemOf } from '../errors/problem';
import { isTransientInfrastructureError } from '../errors/transient';

/**
 * The one place errors become responses: RFC 9457 problem+json for every failure. Catalogued
 * errors keep their status and detail; dependency outages become 503; anything else is a 500
 * whose internals stay in the log, keyed by the request id the client also sees.
 */
const errorHandlerPlugin: FastifyPluginAsync = async (app) => {
  app.setErrorHandler((error: FastifyError, request, reply) => {
    sendProblem(request, reply, toAppError(error, request));
  });
  app.setNotFoundHandler((request, reply) => {
    sendProblem(
      request,
      reply,
      new AppError('not-found', { detail: `${request.method} ${request.url}` }),
    );
  });
};

function toAppError(error: FastifyError, request: FastifyRequest): AppError {
  if (error instanceof AppError) return error;
  if (error.validation) {
    return new AppError('validation-failed', {
      detail: error.message,
      extensions: {
        errors: error.validation.map((v) => ({
          location: error.validationContext ?? 'body',
          pointer: v.instancePath || '/',
          message: v.message ?? 'is invalid',
        })),
      },
    });
  }
  switch (error.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new AppError('payload-too-large');
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return new AppError('unsupported-media-type');
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return new AppError('validation-failed', { detail: 'The body is not valid JSON.' });
    default:
      break;
  }
  if (error.statusCode !== undefined && error.statusCode >= 400 && error.statusCode < 500) {
    return new AppError('validation-failed', { detail: error.message });
  }
  if (isTransientInfrastructureError(error)) {
    request.log.warn({ err: error }, 'dependency unavailable');
    return new AppError('service-unavailable', { retryAfter: 2, cause: error });
  }
  request.log.error({ err: error }, 'unhandled error');
  return new AppError('internal', { detail: `Reference ${request.id} when reporting this.` });
}

export function sendProblem(request: FastifyRequest, reply: FastifyReply, error: AppError): void {
  if (error.retryAfter !== undefined) reply.header('retry-after', String(error.retryAfter));
  void reply
    .code(error.status)
    .type(PROBLEM_CONTENT_TYPE)
    .send(JSON.stringify(problemOf(error, request.url)));
}

export default fp(errorHandlerPlugin, { name: 'error-handler' });
