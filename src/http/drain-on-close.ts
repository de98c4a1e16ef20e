import fp from 'fastify-plugin';
import type { FastifyPluginAsync } from 'fastify';

/**
 * While the app closes, answers to requests still in flight carry `Connection: close`, so their
 * clients drop the keep-alive connection with the answer. Fastify closes only the connections
 * that are idle when the close begins; one that was busy would otherwise hold the close open
 * until its keep-alive timeout ran out (72 s), long after its last answer.
 */
const drainOnClose: FastifyPluginAsync = async (app) => {
  let closing = false;
  app.addHook('preClose', async () => {
    closing = true;
  });
  app.addHook('onSend', (_request, reply, payload, done) => {
    if (closing) reply.header('connection', 'close');
    done(null, payload);
  });
};

export default fp(drainOnClose, { name: 'drain-on-close' });
