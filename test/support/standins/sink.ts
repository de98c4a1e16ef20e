import { createServer } from 'node:http';
import type { IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A notification receiver for contract tests: records every request and answers the next
 * scripted status (then 200), so a test can watch a stand-in's retries.
 */
export async function startSink() {
  const received: { headers: IncomingHttpHeaders; body: string; path: string }[] = [];
  const script: number[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push({
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
        path: req.url ?? '/',
      });
      res.writeHead(script.shift() ?? 200).end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    received,
    /** The next answers, in order: `answer(500, 503)`. */
    answer: (...statuses: number[]) => script.push(...statuses),
    bodies: <T>() => received.map((r) => JSON.parse(r.body) as T),
    close: () =>
      new Promise<void>((resolve) =>
        server.close(() => {
          resolve();
        }),
      ),
  };
}
