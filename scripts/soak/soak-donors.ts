import { randomInt } from 'node:crypto';
import { isOpen } from '../../workflows/contracts';
import { sleep, waitFor } from '../stack/commands';
import { NoFinalAnswer } from '../stack/stack-client';
import type { StackClient } from '../stack/stack-client';

/** What the load asked for and was answered, kept to check the stack against at the end. */
export class SoakRecord {
  /** Every key sent, with each donation id it was answered with (retries included). */
  readonly keys = new Map<string, { amount: number; ids: string[] }>();
  /** Final answers by status, and the keys a client gave up on, by the last answer it saw. */
  readonly answers = new Map<number | string, number>();
  readonly counts = {
    donations: 0,
    retriesOfAKey: 0,
    paid: 0,
    declined: 0,
    abandoned: 0,
    providerRefunds: 0,
    operatorRefunds: 0,
  };
  readonly latenciesMs: number[] = [];
  /** Every attempt's status of a donation request, retried ones included ('none': no answer). */
  readonly attempts = new Map<number | 'none', number>();

  /** The soak's own failures (a request to the stack timed out, say): counted, not fatal. */
  readonly driverErrors = new Map<string, number>();

  driverError(error: unknown): void {
    const what = error instanceof Error ? error.name : 'unknown';
    this.driverErrors.set(what, (this.driverErrors.get(what) ?? 0) + 1);
  }

  answered(status: number | string): void {
    this.answers.set(status, (this.answers.get(status) ?? 0) + 1);
  }
}

export interface DonorOptions {
  client: StackClient;
  campaignId: string;
  record: SoakRecord;
  /** Donors stop starting donations once this returns true. */
  stopped: () => boolean;
}

/**
 * One closed-loop donor: donates under a fresh key (retrying it through every 409, 503 and
 * dropped connection, as a client should), now and then sends the same key again, then pays,
 * is declined or walks away at the simulator. A paid donation may be refunded later.
 */
export async function runDonor(
  donor: number,
  options: DonorOptions,
  refundable: (donationId: string) => void,
): Promise<void> {
  const { client, campaignId, record } = options;
  for (let n = 0; !options.stopped(); n++) {
    await donateOnce(n).catch((error: unknown) => {
      record.driverError(error);
    });
    await sleep(randomInt(50, 300));
  }

  async function donateOnce(n: number): Promise<void> {
    const key = `soak-${campaignId}-${donor}-${n}`;
    const amount = randomInt(10, 500) * 1_000;
    const entry = { amount, ids: [] as string[] };
    record.keys.set(key, entry);
    const id = await donate(key, amount, entry);
    if (id === undefined) return;
    record.counts.donations++;
    if (randomInt(4) === 0) {
      record.counts.retriesOfAKey++;
      await donate(key, amount, entry);
    }
    const payment = await waitFor(`payment of ${id}`, () => client.paymentId(id), 60_000).catch(
      () => undefined,
    );
    if (payment === undefined) return;
    const fate = randomInt(20);
    if (fate < 15) {
      if ((await client.movePayment(payment, 'settle').catch(() => 0)) === 200) {
        record.counts.paid++;
        if (randomInt(3) === 0) refundable(id);
      }
    } else if (fate < 17) {
      if ((await client.movePayment(payment, 'decline').catch(() => 0)) === 200) {
        record.counts.declined++;
      }
    } else {
      record.counts.abandoned++;
    }
  }

  async function donate(key: string, amount: number, entry: { ids: string[] }) {
    const started = Date.now();
    try {
      const answer = await client.donateUntilAnswered(key, campaignId, amount, undefined, (s) => {
        record.attempts.set(s ?? 'none', (record.attempts.get(s ?? 'none') ?? 0) + 1);
      });
      record.answered(answer.status);
      record.latenciesMs.push(Date.now() - started);
      if (answer.status !== 202 && answer.status !== 200 && answer.status !== 201) return undefined;
      entry.ids.push(answer.body.id);
      return answer.body.id;
    } catch (error) {
      const last = error instanceof NoFinalAnswer ? (error.lastStatus ?? 'no connection') : 'error';
      record.answered(`gave up (last ${last})`);
      return undefined;
    }
  }
}

/**
 * Refunds some paid donations once they are CONFIRMED: half at the provider (its dashboard),
 * half by an operator through galang; each in full or in part, each donation at most once,
 * until the load ends.
 */
export async function runRefunder(
  queue: string[],
  options: DonorOptions,
  done: () => boolean,
): Promise<void> {
  const { client, record } = options;
  // Refunds belong to the load's window: what is still queued when it ends is dropped, so a
  // stack that stopped answering cannot hold the soak for the queue's length of waits.
  while (!done()) {
    const id = queue.shift();
    if (id === undefined) {
      await sleep(500);
      continue;
    }
    await refundOnce(id).catch((error: unknown) => {
      record.driverError(error);
    });
  }

  async function refundOnce(id: string): Promise<void> {
    const status = await waitFor(
      `donation ${id} confirmed`,
      async () => {
        const { body } = await client.donation(id).catch(() => ({ body: { status: 'PENDING' } }));
        return isOpen(body.status) ? undefined : body.status;
      },
      120_000,
    ).catch(() => undefined);
    if (status !== 'CONFIRMED') return;
    const { amount } = (await client.donation(id)).body;
    const part = randomInt(2) === 0 ? undefined : Math.max(1_000, Math.floor(amount / 2000) * 1000);
    if (randomInt(2) === 0) {
      const payment = await client.paymentId(id);
      if (payment && (await client.refundAtProvider(payment, part).catch(() => 0)) === 201) {
        record.counts.providerRefunds++;
      }
    } else {
      const answer = await client
        .refundUntilAnswered(id, `refund-${id}`, part)
        .catch(() => undefined);
      if (answer?.status === 202) record.counts.operatorRefunds++;
    }
  }
}
