import { randomUUID } from 'node:crypto';
import { signStandardWebhook } from '../standard-webhooks';
import type { SimulatorNotification } from './simulator-protocol';

export interface DeliveryKnobs {
  /** Each notification is delivered this many times in all. */
  duplicates?: number;
  /** After a final state, deliver a stale notification of the state before it. */
  reorder?: boolean;
  /** Deliver notifications only after this many milliseconds. */
  webhookDelayMs?: number;
  /** Never deliver this payment's notifications: galang must ask for the status itself. */
  dropWebhooks?: boolean;
}

export interface DeliveryOptions {
  webhookSecret: string;
  /** Delivery attempts per notification while galang's endpoint fails. */
  maxDeliveryAttempts: number;
  /** Where to POST; read at each attempt (a test may move it). */
  url: () => string;
  sleep: (ms: number) => Promise<void>;
  closed: () => boolean;
}

/**
 * Sends the simulator's notifications the way a gateway does: Standard Webhooks signed, the
 * same message id on every copy, retried with backoff while galang's endpoint fails.
 */
export class SimulatorDelivery {
  constructor(private readonly options: DeliveryOptions) {}

  /** Delivers `current` with the planned adversity; `stale` is the earlier state's message. */
  async send(
    knobs: DeliveryKnobs,
    current: SimulatorNotification,
    stale: SimulatorNotification | undefined,
  ): Promise<void> {
    if (knobs.dropWebhooks) return;
    if (knobs.webhookDelayMs) await this.options.sleep(knobs.webhookDelayMs);
    const id = `msg_${randomUUID()}`;
    const body = JSON.stringify(current);
    // A duplicate is the same message delivered again, as a gateway's retry would be.
    const copies = Math.max(1, knobs.duplicates ?? 1);
    await Promise.all(Array.from({ length: copies }, () => this.deliver(id, body)));
    if (knobs.reorder && stale) await this.deliver(`msg_${randomUUID()}`, JSON.stringify(stale));
  }

  /** POSTs one signed message, retrying with backoff while galang's endpoint fails. */
  private async deliver(id: string, body: string): Promise<void> {
    for (let attempt = 0; attempt < this.options.maxDeliveryAttempts; attempt++) {
      if (this.options.closed()) return;
      const timestamp = Math.floor(Date.now() / 1000);
      try {
        const response = await fetch(this.options.url(), {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            'webhook-id': id,
            'webhook-timestamp': String(timestamp),
            'webhook-signature': signStandardWebhook(
              this.options.webhookSecret,
              id,
              timestamp,
              body,
            ),
          },
          body,
          signal: AbortSignal.timeout(5_000),
        });
        if (response.ok) return;
      } catch {
        // galang's endpoint is down or slow: back off and deliver again, like a real gateway.
      }
      await this.options.sleep(Math.min(200 * 2 ** attempt, 30_000));
    }
  }
}
