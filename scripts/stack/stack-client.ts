import pg from 'pg';
import type { SimulatorPayment } from '../../src/providers/simulator/simulator-protocol';
import { sleep } from './commands';

/** What the clients of a running stack need to reach it. */
export interface StackAddress {
  apiUrl: string;
  simulatorUrl: string;
  databaseUrl: string;
  secrets: { clientSecret: string; operatorSecret: string };
}

export interface Answer<T = Record<string, unknown>> {
  status: number;
  body: T;
  replayed: boolean;
}

export interface DonationView {
  id: string;
  status: string;
  campaignId: string;
  amount: number;
}

/** A client gave up: only retryable answers (or none) until its deadline. */
export class NoFinalAnswer extends Error {
  constructor(readonly lastStatus: number | undefined) {
    super(`no final answer before the deadline (last: ${lastStatus ?? 'no connection'})`);
  }
}

export interface StoredDonation {
  id: string;
  key: string;
  status: string;
  amount: number;
  net: number;
  credits: number;
}

const RETRIED = new Set([409, 429, 500, 502, 503, 504]);

/**
 * A client of a running stack as a donor's app, an operator and the provider's dashboard use
 * it: galang's HTTP API with its keys, the simulator's gateway and control routes, and (where
 * an operator would open psql) galang's database for what no route shows.
 */
export class StackClient {
  private readonly db: pg.Pool;

  constructor(private readonly stack: StackAddress) {
    this.db = new pg.Pool({ connectionString: stack.databaseUrl, max: 2 });
    this.db.on('error', () => undefined);
  }

  async close(): Promise<void> {
    await this.db.end();
  }

  createCampaign(id: string): Promise<Answer> {
    return this.call('operator', 'POST', '/v1/campaigns', `campaign-${id}`, {
      id,
      title: `Campaign ${id}`,
      goalAmount: 1_000_000_000_000,
      currency: 'IDR',
    });
  }

  /** One attempt at a donation under `key`. */
  donate(key: string, campaignId: string, amount: number): Promise<Answer<DonationView>> {
    return this.call('client', 'POST', '/v1/donations', key, donationBody(campaignId, amount));
  }

  /**
   * Retries as a well-behaved client does: the same key and body on 409, 429, 5xx or no answer
   * (a process restarting), until an answer that is final or `deadline` passes. `seen` hears
   * every attempt's status, the retried ones too (undefined: no answer).
   */
  async donateUntilAnswered(
    key: string,
    campaignId: string,
    amount: number,
    deadline = Date.now() + 120_000,
    seen?: (status: number | undefined) => void,
  ): Promise<Answer<DonationView>> {
    return this.untilAnswered(() => this.donate(key, campaignId, amount), deadline, seen);
  }

  donation(id: string): Promise<Answer<DonationView>> {
    return this.call('client', 'GET', `/v1/donations/${id}`);
  }

  campaign(id: string): Promise<Answer<{ confirmedAmount: number; donationCount: number }>> {
    return this.call('operator', 'GET', `/v1/campaigns/${id}`);
  }

  /** An operator's refund of the whole donation, or `amount` of it. */
  refund(donationId: string, key: string, amount?: number): Promise<Answer> {
    return this.call('operator', 'POST', `/v1/donations/${donationId}/refunds`, key, {
      reason: 'donor asked',
      ...(amount === undefined ? {} : { amount }),
    });
  }

  async refundUntilAnswered(donationId: string, key: string, amount?: number): Promise<Answer> {
    return this.untilAnswered(() => this.refund(donationId, key, amount), Date.now() + 120_000);
  }

  /** The simulator's payment id of a donation, once galang has created the payment. */
  async paymentId(donationId: string): Promise<string | undefined> {
    const result = await this.db.query<{ provider_reference: string | null }>(
      'SELECT provider_reference FROM donations WHERE id = $1',
      [donationId],
    );
    return result.rows[0]?.provider_reference ?? undefined;
  }

  /** The provider's record of a payment: its status, refunds and disputes. */
  async payment(paymentId: string): Promise<SimulatorPayment> {
    const response = await fetch(`${this.stack.simulatorUrl}/v1/payments/${paymentId}`);
    if (!response.ok) throw new Error(`simulator: ${paymentId} answered ${response.status}`);
    return (await response.json()) as SimulatorPayment;
  }

  /** The provider's whole record: every payment it made, with refunds and disputes. */
  async allPayments(): Promise<SimulatorPayment[]> {
    const response = await fetch(`${this.stack.simulatorUrl}/test/payments`);
    if (!response.ok) throw new Error(`simulator: GET /test/payments answered ${response.status}`);
    return ((await response.json()) as { payments: SimulatorPayment[] }).payments;
  }

  /** The donor pays (or the bank declines): the simulator notifies galang by signed webhook. */
  async movePayment(paymentId: string, action: 'settle' | 'decline' | 'expire'): Promise<number> {
    const response = await fetch(
      `${this.stack.simulatorUrl}/test/payments/${paymentId}/${action}`,
      {
        method: 'POST',
      },
    );
    return response.status;
  }

  /** A refund made in the provider's dashboard, not through galang. */
  async refundAtProvider(paymentId: string, amount?: number): Promise<number> {
    const response = await fetch(`${this.stack.simulatorUrl}/test/payments/${paymentId}/refunds`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(amount === undefined ? {} : { amount }),
    });
    return response.status;
  }

  /** galang's ledger: each campaign's net, and its donations with money still in. */
  async ledger(campaignId: string): Promise<{ net: number; donations: number }> {
    const result = await this.db.query<{ net: string; donations: string }>(
      `SELECT coalesce(sum(net), 0) AS net, count(*) FILTER (WHERE net > 0) AS donations
         FROM (SELECT donation_id, sum(amount) AS net FROM donation_ledger
                WHERE campaign_id = $1 GROUP BY donation_id) d`,
      [campaignId],
    );
    const row = result.rows[0];
    return { net: Number(row?.net ?? 0), donations: Number(row?.donations ?? 0) };
  }

  /**
   * Every donation of a campaign as stored: id, key, status, amount, its net in the ledger and
   * how many times it was credited (DONATION entries).
   */
  async donations(campaignId: string): Promise<StoredDonation[]> {
    const result = await this.db.query<Record<keyof StoredDonation, string>>(
      `SELECT d.id, d.idempotency_key AS key, d.status, d.amount,
              coalesce(sum(l.amount), 0) AS net,
              count(l.id) FILTER (WHERE l.entry_type = 'DONATION') AS credits
         FROM donations d LEFT JOIN donation_ledger l ON l.donation_id = d.id
        WHERE d.campaign_id = $1
        GROUP BY d.id`,
      [campaignId],
    );
    return result.rows.map((row) => ({
      id: row.id,
      key: row.key,
      status: row.status,
      amount: Number(row.amount),
      net: Number(row.net),
      credits: Number(row.credits),
    }));
  }

  private async untilAnswered<T>(
    attempt: () => Promise<Answer<T>>,
    deadline: number,
    seen?: (status: number | undefined) => void,
  ): Promise<Answer<T>> {
    for (;;) {
      const answer = await attempt().catch(() => undefined);
      seen?.(answer?.status);
      if (answer && !RETRIED.has(answer.status)) return answer;
      if (Date.now() > deadline) throw new NoFinalAnswer(answer?.status);
      await sleep(250);
    }
  }

  private async call<T>(
    who: 'client' | 'operator',
    method: 'GET' | 'POST',
    route: string,
    key?: string,
    body?: unknown,
  ): Promise<Answer<T>> {
    const secret =
      who === 'client' ? this.stack.secrets.clientSecret : this.stack.secrets.operatorSecret;
    const response = await fetch(`${this.stack.apiUrl}${route}`, {
      method,
      headers: {
        authorization: `Bearer ${secret}`,
        ...(key === undefined ? {} : { 'idempotency-key': key }),
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(30_000),
    });
    return {
      status: response.status,
      body: (await response.json().catch(() => ({}))) as T,
      replayed: response.headers.get('idempotent-replayed') === 'true',
    };
  }
}

export function donationBody(campaignId: string, amount: number) {
  return {
    campaignId,
    amount,
    currency: 'IDR',
    donor: { name: 'Ani', email: 'ani@example.com', anonymous: false },
    paymentMethod: 'qris',
  };
}
