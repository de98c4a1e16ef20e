/**
 * Xendit as a provider of the money model: galang's Xendit adapter on the loopback stand-in.
 * Its controls pay (by card) or expire the invoice, make refunds through the Refund API as the
 * Dashboard does (they answer PENDING), and settle or fail them by webhook.
 */
import type { XenditStandin } from '../support/standins/xendit';
import type { History, ProviderProfile } from './history';
import type { CaseIds } from './case-ids';
import type {
  CaseProvider,
  OperatorRefundStep,
  ProviderDriver,
  ProviderStep,
} from './provider-driver';
import { poll } from './provider-driver';
import type { Watch } from './provider-driver';
import type { Notifications } from './standin-notifications';

class XenditCase implements CaseProvider {
  private readonly marks = new Map<number, number[]>();
  private invoiceId = '';

  constructor(
    private readonly driver: XenditDriver,
    private readonly ids: CaseIds,
  ) {}

  beforeDonation(): void {}

  async payment(timeoutMs: number): Promise<string> {
    const invoice = await poll(
      () => this.driver.xendit.invoices(this.ids.donationId)[0],
      timeoutMs,
      'the donation has no invoice at Xendit',
    );
    this.invoiceId = invoice.id;
    return invoice.id;
  }

  stepStarts(at: number): void {
    this.marks.set(at, this.driver.notifications.mark());
  }

  async perform(step: ProviderStep): Promise<void> {
    const { xendit } = this.driver;
    switch (step.kind) {
      case 'payment':
        if (step.to === 'settled') xendit.pay(this.invoiceId, 'CREDIT_CARD');
        else if (step.to === 'expired') xendit.expire(this.invoiceId);
        else throw new Error(`Xendit documents no move of an invoice to ${step.to}`);
        return;
      case 'refund':
        if (step.start !== 'pending') throw new Error('Xendit refunds start PENDING');
        this.ids.names.set(
          step.refund,
          await this.driver.dashboardRefund(this.invoiceId, step.amount),
        );
        return;
      case 'refund-update':
        if (step.to === 'succeeded') xendit.settleRefund(this.named(step.refund));
        else xendit.failRefund(this.named(step.refund));
        return;
      case 'provider-fault': {
        const path = {
          read: `GET /v2/invoices/${this.invoiceId}`,
          cancel: `POST /invoices/${this.invoiceId}/expire!`,
          refund: 'POST /refunds',
        }[step.call];
        xendit.faults.add(path, { kind: 'status', status: step.status });
        return;
      }
      case 'payment-reversed':
      case 'dispute':
      case 'dispute-update':
        throw new Error(`the Xendit stand-in has no ${step.kind}`);
    }
  }

  beforeOperatorRefund(): void {}

  async afterOperatorRefund(
    _step: OperatorRefundStep,
    _at: number,
    timeoutMs: number,
    watch: Watch,
  ) {
    const known = new Set(this.ids.names.values());
    const refund = await poll(
      () => this.driver.xendit.refundsOf(this.invoiceId).find((r) => !known.has(r.id)),
      timeoutMs,
      'the operator refund never reached Xendit',
      watch,
    );
    return refund.id;
  }

  async redeliver(of: number): Promise<string> {
    const { notifications } = this.driver;
    const sent = notifications.between(
      this.invoiceId,
      this.marks.get(of) ?? [],
      this.marks.get(of + 1),
    );
    // Nothing to send again: a new refund is answered PENDING, never notified.
    if (sent.length === 0) return `step ${of} notified nothing: nothing to redeliver`;
    const answers: string[] = [];
    for (const delivery of sent) {
      const body = JSON.parse(delivery.delivery.body) as { event?: string; status?: string };
      answers.push(
        `${body.event ?? body.status ?? '?'} ${await notifications.resend(this.invoiceId, delivery)}`,
      );
    }
    return `redelivered ${answers.join(', ')}`;
  }

  private named(name: string): string {
    const id = this.ids.names.get(name);
    if (!id) throw new Error(`${name} was never made`);
    return id;
  }
}

export class XenditDriver implements ProviderDriver {
  readonly method = 'card';

  constructor(
    readonly profile: ProviderProfile,
    readonly xendit: XenditStandin,
    readonly notifications: Notifications,
    private readonly secretKey: string,
  ) {}

  forCase(ids: CaseIds, _history: History): XenditCase {
    return new XenditCase(this, ids);
  }

  /** A refund made outside galang, through the same Refund API; answers its id. */
  async dashboardRefund(invoiceId: string, amount: number): Promise<string> {
    const response = await fetch(`${this.xendit.url}/refunds`, {
      method: 'POST',
      headers: {
        authorization: `Basic ${Buffer.from(`${this.secretKey}:`).toString('base64')}`,
        'content-type': 'application/json',
        'x-standin-control': 'dashboard',
      },
      body: JSON.stringify({ invoice_id: invoiceId, amount, reason: 'OTHERS' }),
    });
    const body = (await response.json()) as { id?: string };
    if (!response.ok || !body.id)
      throw new Error(`Xendit refused the refund: ${JSON.stringify(body)}`);
    return body.id;
  }

  inFlight(ids: CaseIds): number {
    return ids.providerReference ? this.notifications.inFlight(ids.providerReference) : 0;
  }

  state(ids: CaseIds): unknown {
    return [
      this.xendit.invoices(ids.donationId),
      this.xendit.refundsOf(ids.providerReference ?? ''),
    ];
  }

  charges(ids: CaseIds): number {
    return this.xendit.invoices(ids.donationId).length;
  }

  payments(ids: CaseIds): string[] {
    return this.xendit.invoices(ids.donationId).map((i) => i.id);
  }

  refunds(ids: CaseIds): number {
    return this.xendit.refundsOf(ids.providerReference ?? '').length;
  }

  pendingRefunds(ids: CaseIds): string[] {
    return this.xendit
      .refundsOf(ids.providerReference ?? '')
      .filter((r) => r.status === 'PENDING')
      .map((r) => r.id);
  }

  refused(ids: CaseIds) {
    return ids.providerReference ? this.notifications.refused(ids.providerReference) : [];
  }
}
