import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { WebhookHeaders } from '../../src/providers/payment-provider';

export interface ReceivedWebhook {
  body: Buffer;
  headers: WebhookHeaders;
}

/**
 * A webhook endpoint that keeps every request's exact bytes and headers and answers 200, so a
 * test can verify and normalize what a gateway sent with the adapter's own `parseWebhook`.
 */
export async function webhookSink(): Promise<{
  url: string;
  received: ReceivedWebhook[];
  close(): Promise<void>;
}> {
  const received: ReceivedWebhook[] = [];
  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      received.push({ body: Buffer.concat(chunks), headers: request.headers });
      response.writeHead(200).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    received,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => {
          resolve();
        });
      }),
  };
}
