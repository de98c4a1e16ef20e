/**
 * Sends a stand-in's notifications to the configured URL and retries them as the provider's
 * documentation says. `retryDelayMs(attempt, status)` gives the wait before retry number
 * `attempt` (1-based) after an answer `status` (undefined: no answer), or undefined to stop;
 * `timeScale` compresses the documented schedule (0: retry at once) so tests need no clock.
 */
export interface Delivery {
  id: number;
  body: string;
  headers: Record<string, string>;
  /** One entry per attempt: the HTTP status, or the network error's text. */
  attempts: (number | string)[];
  done: boolean;
}

export interface NotifierOptions {
  url: string;
  retryDelayMs: (attempt: number, status: number | undefined) => number | undefined;
  timeScale?: number;
  /** Each attempt's wait for an answer (Midtrans documents 15 s). */
  timeoutMs?: number;
}

export class Notifier {
  readonly deliveries: Delivery[] = [];
  /** While held, new notifications queue here untouched; `release` sends them, in any order. */
  readonly held: Delivery[] = [];
  hold = false;
  private readonly inFlight = new Set<Promise<void>>();
  private readonly timers = new Set<NodeJS.Timeout>();
  private nextId = 1;
  private closed = false;

  constructor(private readonly options: NotifierOptions) {}

  /** Queues one notification; `headers` is called per attempt (Stripe re-signs each one). */
  notify(body: string, headers: () => Record<string, string>): Delivery {
    const delivery: Delivery = {
      id: this.nextId++,
      body,
      headers: headers(),
      attempts: [],
      done: false,
    };
    this.deliveries.push(delivery);
    if (this.hold) this.held.push(delivery);
    else this.track(this.attempt(delivery, headers, 0));
    return delivery;
  }

  /** Sends held notifications in the order given (default: as queued); drops the rest if asked. */
  release(order?: number[], options: { dropRest?: boolean } = {}): void {
    const chosen = order ? order.map((i) => this.held[i]) : [...this.held];
    const rest = this.held.filter((d) => !chosen.includes(d));
    this.held.length = 0;
    if (!options.dropRest) this.held.push(...rest);
    for (const delivery of chosen) {
      if (delivery) this.track(this.attempt(delivery, () => delivery.headers, 0));
    }
  }

  /** Resolves once nothing is in flight and no retry is scheduled. */
  async settled(): Promise<void> {
    while (this.inFlight.size > 0 || this.timers.size > 0) {
      await Promise.race([...this.inFlight, new Promise((r) => setTimeout(r, 5))]);
    }
  }

  close(): void {
    this.closed = true;
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
  }

  private track(promise: Promise<void>): void {
    this.inFlight.add(promise);
    void promise.finally(() => this.inFlight.delete(promise));
  }

  private async attempt(
    delivery: Delivery,
    headers: () => Record<string, string>,
    retries: number,
  ): Promise<void> {
    if (this.closed) return;
    delivery.headers = headers();
    let status: number | undefined;
    try {
      const response = await fetch(this.options.url, {
        method: 'POST',
        headers: delivery.headers,
        body: delivery.body,
        redirect: 'manual',
        signal: AbortSignal.timeout(this.options.timeoutMs ?? 15_000),
      });
      await response.arrayBuffer();
      status = response.status;
      delivery.attempts.push(status);
    } catch (error) {
      delivery.attempts.push(String(error));
    }
    if (status !== undefined && status >= 200 && status < 300) {
      delivery.done = true;
      return;
    }
    const wait = this.options.retryDelayMs(retries + 1, status);
    // A closed notifier's timers are cleared; `attempt` checks `closed` again.
    if (wait === undefined) return;
    const timer = setTimeout(
      () => {
        this.timers.delete(timer);
        this.track(this.attempt(delivery, headers, retries + 1));
      },
      wait * (this.options.timeScale ?? 1),
    );
    this.timers.add(timer);
  }
}
