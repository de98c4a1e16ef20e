import fp from 'fastify-plugin';
import type { FastifyPluginAsync, FastifyRequest, onRequestHookHandler } from 'fastify';
import { AppError } from '../errors/error-catalogue';
import { bearerToken, keyDigest, ownersByKeyDigest } from './key-authenticator';
import { withHook } from '../http/route-hooks';

export type Principal = { kind: 'client' | 'operator' | 'codec'; id: string };

/**
 * Who may call a route: set per route as `config.auth`. `codec` is the payload codec endpoint's
 * role alone: its keys open nothing else, and no other key opens it.
 */
export type AuthRequirement = 'none' | 'client' | 'operator' | 'client-or-operator' | 'codec';

declare module 'fastify' {
  interface FastifyContextConfig {
    auth?: AuthRequirement;
  }
  interface FastifyRequest {
    principal: Principal | undefined;
  }
}

export interface AuthPluginOptions {
  apiKeys: ReadonlyMap<string, string>;
  operatorKeys: ReadonlyMap<string, string>;
  codecKeys: ReadonlyMap<string, string>;
}

/**
 * Authenticates bearer keys in `onRequest`, before anything is parsed or stored. Each route
 * declares its requirement, and the check is attached to the route when it is registered, so
 * a request pays for exactly its route's check. A route that declares nothing is refused:
 * forgetting is never open access.
 */
const authPlugin: FastifyPluginAsync<AuthPluginOptions> = async (app, options) => {
  const clients = ownersByKeyDigest(options.apiKeys);
  const operators = ownersByKeyDigest(options.operatorKeys);
  const codecs = ownersByKeyDigest(options.codecKeys);
  app.decorateRequest('principal', undefined);

  const authenticate = (request: FastifyRequest, requirement: AuthRequirement): Principal => {
    const token = bearerToken(request.headers.authorization);
    if (token === undefined) throw new AppError('unauthorized');
    const presented = keyDigest(token);
    const clientId = clients.get(presented);
    const operatorId = operators.get(presented);
    const codecId = codecs.get(presented);
    if (requirement === 'codec') {
      if (codecId !== undefined) return { kind: 'codec', id: codecId };
    } else {
      if (operatorId !== undefined && requirement !== 'client')
        return { kind: 'operator', id: operatorId };
      if (clientId !== undefined && requirement !== 'operator')
        return { kind: 'client', id: clientId };
    }
    throw new AppError(
      clientId !== undefined || operatorId !== undefined || codecId !== undefined
        ? 'forbidden'
        : 'unauthorized',
    );
  };

  app.addHook('onRoute', (route) => {
    const requirement = route.config?.auth;
    if (requirement === 'none') return;
    const hook: onRequestHookHandler =
      requirement === undefined
        ? (_request, _reply, done) => {
            done(new AppError('not-found'));
          }
        : (request, _reply, done) => {
            try {
              request.principal = authenticate(request, requirement);
              done();
            } catch (error) {
              done(error as AppError);
            }
          };
    route.onRequest = withHook(route.onRequest, hook);
  });
};

export default fp(authPlugin, { name: 'auth' });
