import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { signStandardWebhook } from '../../src/providers/standard-webhooks';

/** One notification as the simulator sent it, keyed by what it is about. */
export interface RecordedWebhook {
  id: string;
  body: string;
  type: string;
  /** The id of the payment, refund or dispute it reports on, and that object's status. */
  objectId: string;
  status: string;
  reference: string;
}

/**
 * Sits between the simulator and the API: forwards every notification unchanged (bytes and
 * headers), keeps it so a test can deliver it again, and counts what is still in flight so a
 * test knows when the provider has nothing more to say.
 */
export class WebhookRecorder {
  readonly received: RecordedWebhook[] = [];
  /** Notifications the API did not answer 2xx (every one must be: see MONEY-MODEL.md). */
  readonly refused: { reference: string; status: number; body: string }[] = [];
  private readonly inFlight = new Map<string, number>();
  private server: http.Server | undefined;

  constructor(
    private readonly target: string,
    private readonly secret: string,
  ) {}

  async listen(): Promise<string> {
    const server = http.createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        void this.forward(Buffer.concat(chunks), request.headers, true).then(
          (status) => response.writeHead(status).end(),
          () => response.writeHead(502).end(),
        );
      });
    });
    this.server = server;
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  }

  /** Notifications about this donation still on their way to the API. */
  pending(reference: string): number {
    return this.inFlight.get(reference) ?? 0;
  }

  /** The latest notification about `objectId` in `status`, once the simulator has sent one. */
  find(objectId: string, status: string): RecordedWebhook | undefined {
    return this.received.findLast((w) => w.objectId === objectId && w.status === status);
  }

  /**
   * Delivers a kept notification again, signed afresh as a gateway's retry is: with its own
   * message id (a duplicate) or under a new one (the same state, reordered after later ones).
   */
  async redeliver(webhook: RecordedWebhook, mode: 'duplicate' | 'stale'): Promise<number> {
    const id = mode === 'duplicate' ? webhook.id : `msg_${randomUUID()}`;
    const timestamp = Math.floor(Date.now() / 1000);
    const headers = {
      'content-type': 'application/json',
      'webhook-id': id,
      'webhook-timestamp': String(timestamp),
      'webhook-signature': signStandardWebhook(this.secret, id, timestamp, webhook.body),
    };
    return this.forward(Buffer.from(webhook.body), headers, false);
  }

  async close(): Promise<void> {
    const server = this.server;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => {
      server.close(() => {
        resolve();
      });
    });
  }

  private async forward(
    body: Buffer,
    headers: http.IncomingHttpHeaders,
    fromSimulator: boolean,
  ): Promise<number> {
    const parsed = parse(body, headers);
    if (parsed && fromSimulator) this.received.push(parsed);
    const reference = parsed?.reference ?? '';
    this.inFlight.set(reference, (this.inFlight.get(reference) ?? 0) + 1);
    try {
      const forwarded: Record<string, string> = {};
      for (const name of ['content-type', 'webhook-id', 'webhook-timestamp', 'webhook-signature']) {
        const value = headers[name];
        if (typeof value === 'string') forwarded[name] = value;
      }
      const response = await fetch(this.target, {
        method: 'POST',
        headers: forwarded,
        body,
        signal: AbortSignal.timeout(10_000),
      });
      await response.arrayBuffer();
      if (!response.ok) {
        this.refused.push({ reference, status: response.status, body: body.toString('utf8') });
      }
      return response.status;
    } finally {
      this.inFlight.set(reference, (this.inFlight.get(reference) ?? 1) - 1);
    }
  }
}

function parse(body: Buffer, headers: http.IncomingHttpHeaders): RecordedWebhook | undefined {
  try {
    const message = JSON.parse(body.toString('utf8')) as {
      type: string;
      data: { id: string; status: string; reference: string };
    };
    const id = headers['webhook-id'];
    return {
      id: typeof id === 'string' ? id : '',
      body: body.toString('utf8'),
      type: message.type,
      objectId: message.data.id,
      status: message.data.status,
      reference: message.data.reference,
    };
  } catch {
    return undefined;
  }
}
