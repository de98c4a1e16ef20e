/**
 * The stand-ins' notifications as the money driver needs them: a relay in front of the API
 * (the stand-ins are built before the API has a port), what each step sent, what is still in
 * flight, what the API refused, and deliveries sent again (duplicated, or late after others).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Delivery, Notifier } from '../support/standins/notifier';

/** Forwards every request, path and headers unchanged, to `target` once it is set. */
export class WebhookRelay {
  target = 'http://127.0.0.1:9';
  private server: http.Server | undefined;

  async listen(): Promise<string> {
    const server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const headers: Record<string, string> = {};
        for (const [name, value] of Object.entries(req.headers)) {
          if (typeof value === 'string' && !['host', 'content-length', 'connection'].includes(name))
            headers[name] = value;
        }
        fetch(`${this.target}${req.url ?? '/'}`, {
          method: 'POST',
          headers,
          body: Buffer.concat(chunks),
          signal: AbortSignal.timeout(14_000),
        }).then(
          async (answer) => res.writeHead(answer.status).end(await answer.text()),
          () => res.writeHead(502).end(),
        );
      });
    });
    this.server = server;
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  }

  async close(): Promise<void> {
    const server = this.server;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) =>
      server.close(() => {
        resolve();
      }),
    );
  }
}

/** One notifier of a stand-in, its API path, and the headers a new attempt carries. */
export interface Channel {
  notifier: Notifier;
  path: string;
  /** Headers for sending `body` again (Stripe signs each attempt afresh). */
  headers(delivery: Delivery): Record<string, string>;
}

export class Notifications {
  private readonly manualInFlight = new Map<string, number>();
  private readonly manualRefused: { about: string; status: number; body: string }[] = [];

  constructor(
    private readonly channels: readonly Channel[],
    private readonly relay: WebhookRelay,
  ) {}

  /** Where each channel's list stands: a step's notifications are the ones after its mark. */
  mark(): number[] {
    return this.channels.map((c) => c.notifier.deliveries.length);
  }

  /** Deliveries about `about` made between two marks (the end: now). */
  between(
    about: string,
    from: number[],
    to?: number[],
  ): { channel: Channel; delivery: Delivery }[] {
    return this.channels.flatMap((channel, i) =>
      channel.notifier.deliveries
        .slice(from[i] ?? 0, to?.[i])
        .filter((d) => d.body.includes(about))
        .map((delivery) => ({ channel, delivery })),
    );
  }

  /** First attempts not yet answered, and driver redeliveries under way. */
  inFlight(about: string): number {
    const first = this.between(
      about,
      this.channels.map(() => 0),
    ).filter(({ delivery }) => !delivery.done && delivery.attempts.length === 0).length;
    return first + (this.manualInFlight.get(about) ?? 0);
  }

  /** Every attempt the API did not answer 2xx (each must be: see MONEY-MODEL.md). */
  refused(about: string): { status: number; body: string }[] {
    const sent = this.between(
      about,
      this.channels.map(() => 0),
    ).flatMap(({ delivery }) =>
      delivery.attempts
        .filter((a) => typeof a !== 'number' || a < 200 || a >= 300)
        .map((a) => ({ status: typeof a === 'number' ? a : 0, body: delivery.body })),
    );
    return [...sent, ...this.manualRefused.filter((r) => r.about === about)];
  }

  /** Sends a kept delivery again, straight to the API, as a provider's retry would. */
  async resend(about: string, { channel, delivery }: { channel: Channel; delivery: Delivery }) {
    this.manualInFlight.set(about, (this.manualInFlight.get(about) ?? 0) + 1);
    try {
      const answer = await fetch(`${this.relay.target}${channel.path}`, {
        method: 'POST',
        headers: channel.headers(delivery),
        body: delivery.body,
        signal: AbortSignal.timeout(14_000),
      });
      await answer.arrayBuffer();
      if (!answer.ok)
        this.manualRefused.push({ about, status: answer.status, body: delivery.body });
      return answer.status;
    } finally {
      this.manualInFlight.set(about, (this.manualInFlight.get(about) ?? 1) - 1);
    }
  }
}
