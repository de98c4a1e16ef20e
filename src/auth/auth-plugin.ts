import fp from 'fastify-plugin';
import type { FastifyPluginAsync } from 'fastify';
import { AppError } from '../errors/error-catalogue';
import { bearerToken, createKeyAuthenticator } from './key-authenticator';

export type Principal = { kind: 'client'; id: string } | { kind: 'operator'; id: string };

/** Who may call a route: set per route as `config.auth`. */
export type AuthRequirement = 'none' | 'client' | 'operator' | 'client-or-operator';

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
}

/**
 * Authenticates bearer keys in `onRequest`, before anything is parsed or stored. Routes declare
 * their requirement; a route that declares none is refused, so forgetting is never open access.
 */
const authPlugin: FastifyPluginAsync<AuthPluginOptions> = async (app, options) => {
  const client = createKeyAuthenticator(options.apiKeys);
  const operator = createKeyAuthenticator(options.operatorKeys);
  app.decorateRequest('principal', undefined);

  app.addHook('onRequest', async (request) => {
    const requirement = request.routeOptions.config.auth;
    if (requirement === 'none') return;
    if (requirement === undefined) throw new AppError('not-found');
    const token = bearerToken(request.headers.authorization);
    if (token === undefined) throw new AppError('unauthorized');
    const clientId = client(token);
    const operatorId = operator(token);
    if (operatorId !== undefined && requirement !== 'client') {
      request.principal = { kind: 'operator', id: operatorId };
    } else if (clientId !== undefined && requirement !== 'operator') {
      request.principal = { kind: 'client', id: clientId };
    } else if (clientId !== undefined || operatorId !== undefined) {
      throw new AppError('forbidden');
    } else {
      throw new AppError('unauthorized');
    }
  });
};

export default fp(authPlugin, { name: 'auth' });
