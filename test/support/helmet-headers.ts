import helmet from '@fastify/helmet';
import type { FastifyHelmetOptions } from '@fastify/helmet';
import Fastify from 'fastify';

/** Headers every answer has whatever its security: not what these tests compare. */
const GENERIC = new Set(['content-type', 'content-length', 'date', 'connection', 'keep-alive']);

/** The headers `@fastify/helmet` sets with these options, from a bare Fastify app. */
export async function helmetHeaders(
  options: FastifyHelmetOptions,
): Promise<Record<string, string>> {
  const app = Fastify();
  await app.register(helmet, options);
  app.get('/', async () => 'ok');
  try {
    const response = await app.inject({ url: '/' });
    return Object.fromEntries(
      Object.entries(response.headers)
        .filter(([name]) => !GENERIC.has(name))
        .map(([name, value]) => [name, String(value)]),
    );
  } finally {
    await app.close();
  }
}

/** `names` as a response carries them, `null` where it carries none. */
export function headersNamed(
  response: Response,
  names: Iterable<string>,
): Record<string, string | null> {
  return Object.fromEntries([...names].sort().map((name) => [name, response.headers.get(name)]));
}
