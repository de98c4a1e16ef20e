import fp from 'fastify-plugin';
import type { FastifyPluginAsync, onRequestHookHandler } from 'fastify';
import { AppError } from '../errors/error-catalogue';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The route answers while the process is still booting (health, readiness, metrics). */
    duringBoot?: boolean;
  }
}

export interface BootGateOptions {
  /** Whether boot has finished (src/health/boot-state.ts). */
  isReady: () => boolean;
}

/** Seconds a client waits before retrying a node that is still starting. */
const STARTING_RETRY_AFTER_SECONDS = 5;

/**
 * While the process boots (waiting for Postgres and Temporal), every route but those marked
 * `config.duringBoot` answers 503 with Retry-After, before auth or any parsing. Attached per
 * route, first, when the route is registered; once booted it costs one boolean read.
 */
const bootGate: FastifyPluginAsync<BootGateOptions> = async (app, { isReady }) => {
  const gate: onRequestHookHandler = (_request, _reply, done) => {
    done(
      isReady()
        ? undefined
        : new AppError('service-unavailable', {
            detail: 'This node is starting; retry shortly.',
            retryAfter: STARTING_RETRY_AFTER_SECONDS,
          }),
    );
  };
  app.addHook('onRoute', (route) => {
    if (route.config?.duringBoot) return;
    // First of the route's hooks: before auth, which its plugin appends later.
    const own = route.onRequest === undefined ? [] : [route.onRequest].flat();
    route.onRequest = [gate, ...own];
  });
};

export default fp(bootGate, { name: 'boot-gate' });
