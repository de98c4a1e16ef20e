import http from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * An HTTP hop in front of galang's webhook endpoint that fails a share of requests with 500
 * before they reach it, as a crashing or overloaded edge would; the rest are forwarded.
 */
export async function flakyEndpoint(
  target: string,
  failureRate: number,
): Promise<{ url: string; failures: () => number; close(): Promise<void> }> {
  let failures = 0;
  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      if (Math.random() < failureRate) {
        failures++;
        response.writeHead(500).end('injected failure');
        return;
      }
      const headers: Record<string, string> = {};
      for (const [name, value] of Object.entries(request.headers)) {
        if (typeof value === 'string' && !['host', 'content-length', 'connection'].includes(name)) {
          headers[name] = value;
        }
      }
      fetch(`${target}${request.url ?? ''}`, {
        method: request.method ?? 'POST',
        headers,
        body: Buffer.concat(chunks),
      })
        .then(async (upstream) => {
          response.writeHead(upstream.status, {
            'content-type': upstream.headers.get('content-type') ?? 'text/plain',
          });
          response.end(Buffer.from(await upstream.arrayBuffer()));
        })
        .catch(() => {
          response.writeHead(502).end();
        });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    failures: () => failures,
    close: () =>
      new Promise((resolve) =>
        server.close(() => {
          resolve();
        }),
      ),
  };
}
