/**
 * Midtrans as a provider of the money model: galang's Midtrans adapter on the loopback
 * stand-in. Its controls settle, deny, expire and reverse (settlement → deny) payments, book
 * refunds through the Core API as the Dashboard does, have the bank confirm or deny them, and
 * charge back (partial_chargeback, then chargeback).
 */
import type { Client } from '@temporalio/client';
import type { MidtransStandin } from '../support/standins/midtrans';
import type { History, ProviderProfile } from './history';
import type { CaseIds } from './case-ids';
import type {
  CaseProvider,
  OperatorRefundStep,
  ProviderDriver,
  ProviderStep,
} from './provider-driver';
import { paymentReversalId } from '../../workflows/contracts';
import { poll } from './provider-driver';
import type { Watch } from './provider-driver';
import type { Notifications } from './standin-notifications';

type Transaction = NonNullable<ReturnType<MidtransStandin['transaction']>>;

class MidtransCase implements CaseProvider {
  private readonly marks = new Map<number, number[]>();
  /** Refund names to their refund_key, which the bank's confirmation names. */
  private readonly keys = new Map<string, string>();
  private transactionId = '';
  private refundCalls = 0;

  constructor(
    private readonly driver: MidtransDriver,
    private readonly ids: CaseIds,
  ) {}

  private get orderId(): string {
    return this.ids.donationId;
  }

  beforeDonation(): void {}

  async payment(timeoutMs: number): Promise<string> {
    const t = await poll(
      () => this.driver.midtrans.transaction(this.orderId),
      timeoutMs,
      'the donation has no transaction at Midtrans',
    );
    this.transactionId = t.transaction_id;
    return t.transaction_id;
  }

  stepStarts(at: number): void {
    this.marks.set(at, this.driver.notifications.mark());
  }

  async perform(step: ProviderStep): Promise<void> {
    const { midtrans } = this.driver;
    switch (step.kind) {
      case 'payment':
        if (step.to === 'settled') midtrans.pay(this.orderId);
        else if (step.to === 'declined') midtrans.deny(this.orderId);
        else if (step.to === 'expired') midtrans.expire(this.orderId);
        else throw new Error(`Midtrans documents no move of a transaction to ${step.to}`);
        return;
      case 'payment-reversed':
        midtrans.reverse(this.orderId);
        this.ids.names.set('reversal', paymentReversalId(this.transactionId));
        return;
      case 'provider-fault': {
        const call = { read: 'status', cancel: 'cancel', refund: 'refund' }[step.call];
        const method = step.call === 'read' ? 'GET' : 'POST';
        midtrans.faults.add(`${method} /v2/${this.transactionId}/${call}`, {
          kind: 'status',
          status: step.status,
        });
        return;
      }
      case 'refund': {
        const key = `dash-${step.refund}-${this.orderId.slice(0, 8)}`;
        const answer = await this.driver.dashboardRefund(this.orderId, key, step.amount);
        this.keys.set(step.refund, key);
        this.ids.names.set(step.refund, answer);
        if (step.start === 'succeeded') midtrans.confirmRefund(this.orderId, key);
        return;
      }
      case 'refund-update':
        if (step.to === 'failed') throw new Error('Midtrans documents no failed booked refund');
        midtrans.confirmRefund(this.orderId, this.keyOf(step.refund));
        return;
      case 'dispute':
        // Midtrans gives a chargeback no id: galang keys partial and whole by the order (M10).
        midtrans.chargeback(this.orderId, step.amount);
        this.ids.names.set(step.dispute, `${this.orderId}-chargeback`);
        return;
      case 'dispute-update':
        throw new Error('Midtrans documents no dispute decision');
    }
  }

  beforeOperatorRefund(step: OperatorRefundStep): void {
    this.refundCalls = this.driver.refundCalls(this.orderId, this.transactionId);
    if (step.start === 'denied') this.driver.midtrans.denyNextRefund(this.orderId);
  }

  async afterOperatorRefund(
    step: OperatorRefundStep,
    _at: number,
    timeoutMs: number,
    watch: Watch,
  ) {
    const known = new Set(this.ids.names.values());
    await poll(
      () =>
        this.driver.refundCalls(this.orderId, this.transactionId) > this.refundCalls || undefined,
      timeoutMs,
      'the operator refund never reached Midtrans',
      watch,
    );
    if (step.start === 'denied') {
      this.driver.denied.set(this.orderId, (this.driver.denied.get(this.orderId) ?? 0) + 1);
      // The bank's 202 books nothing: the id is the one galang's reversal workflow carries.
      return poll(() => this.driver.newReversal(this.ids, known), 20_000, 'no reversal of it');
    }
    const refund = await poll(
      () =>
        this.driver
          .transactionOf(this.orderId)
          ?.refunds?.find((r) => !known.has(String(r.refund_chargeback_id))),
      timeoutMs,
      'the operator refund was never booked at Midtrans',
      watch,
    );
    this.keys.set(step.refund, refund.refund_key);
    if (step.start === 'succeeded')
      this.driver.midtrans.confirmRefund(this.orderId, refund.refund_key);
    return String(refund.refund_chargeback_id);
  }

  async redeliver(of: number): Promise<string> {
    const { notifications } = this.driver;
    const sent = notifications.between(
      this.transactionId,
      this.marks.get(of) ?? [],
      this.marks.get(of + 1),
    );
    // Nothing to send again: a refund the bank denied is answered, never notified.
    if (sent.length === 0) return `step ${of} notified nothing: nothing to redeliver`;
    const answers: string[] = [];
    for (const delivery of sent) {
      const status = (JSON.parse(delivery.delivery.body) as Transaction).transaction_status;
      answers.push(`${status} ${await notifications.resend(this.transactionId, delivery)}`);
    }
    return `redelivered ${answers.join(', ')}`;
  }

  private keyOf(name: string): string {
    const key = this.keys.get(name);
    if (!key) throw new Error(`${name} was never booked`);
    return key;
  }
}

export class MidtransDriver implements ProviderDriver {
  /** Operator refunds the bank denied, per order: Midtrans books none of them. */
  readonly denied = new Map<string, number>();

  constructor(
    readonly profile: ProviderProfile,
    readonly method: string,
    readonly midtrans: MidtransStandin,
    readonly notifications: Notifications,
    private readonly serverKey: string,
    private readonly temporal: Client,
    private readonly taskQueue: string,
  ) {}

  forCase(ids: CaseIds, _history: History): MidtransCase {
    return new MidtransCase(this, ids);
  }

  transactionOf(orderId: string) {
    return this.midtrans.transaction(orderId);
  }

  /** A refund made outside galang (the Dashboard calls the same Core API); answers its id. */
  async dashboardRefund(orderId: string, key: string, amount: number): Promise<string> {
    const response = await fetch(`${this.midtrans.url}/v2/${orderId}/refund`, {
      method: 'POST',
      headers: {
        authorization: `Basic ${Buffer.from(`${this.serverKey}:`).toString('base64')}`,
        'content-type': 'application/json',
        'x-standin-control': 'dashboard',
      },
      body: JSON.stringify({ refund_key: key, amount, reason: 'dashboard' }),
    });
    const body = (await response.json()) as { status_code: string; refund_chargeback_id?: number };
    if (body.status_code !== '200' || body.refund_chargeback_id === undefined)
      throw new Error(`Midtrans refused the refund: ${JSON.stringify(body)}`);
    return String(body.refund_chargeback_id);
  }

  refundCalls(orderId: string, transactionId: string): number {
    return this.midtrans.calls.filter(
      (c) =>
        c.method === 'POST' &&
        (c.path.startsWith(`/v2/${orderId}/refund`) ||
          c.path.startsWith(`/v2/${transactionId}/refund`)),
    ).length;
  }

  /** The external id of a refund reversal of this donation not among `known`. */
  async newReversal(ids: CaseIds, known: ReadonlySet<string>): Promise<string | undefined> {
    const prefix = `reversal-${ids.donationId}-refund-`;
    for await (const execution of this.temporal.workflow.list({
      query: `TaskQueue = '${this.taskQueue}'`,
    })) {
      const id = execution.workflowId;
      if (id.startsWith(prefix) && !known.has(id.slice(prefix.length)))
        return id.slice(prefix.length);
    }
    return undefined;
  }

  inFlight(ids: CaseIds): number {
    return ids.providerReference ? this.notifications.inFlight(ids.providerReference) : 0;
  }

  state(ids: CaseIds): unknown {
    return this.midtrans.transaction(ids.donationId);
  }

  charges(ids: CaseIds): number {
    return this.midtrans.transaction(ids.donationId) ? 1 : 0;
  }

  payments(ids: CaseIds): string[] {
    const t = this.midtrans.transaction(ids.donationId);
    return t ? [t.transaction_id] : [];
  }

  refunds(ids: CaseIds): number {
    const booked = this.midtrans.transaction(ids.donationId)?.refunds?.length ?? 0;
    return booked + (this.denied.get(ids.donationId) ?? 0);
  }

  pendingRefunds(ids: CaseIds): string[] {
    return (this.midtrans.transaction(ids.donationId)?.refunds ?? [])
      .filter((r) => r.bank_confirmed_at === undefined)
      .map((r) => String(r.refund_chargeback_id));
  }

  refused(ids: CaseIds) {
    return ids.providerReference ? this.notifications.refused(ids.providerReference) : [];
  }
}
