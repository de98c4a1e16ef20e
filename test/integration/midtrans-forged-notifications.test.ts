import { WorkflowNotFoundError } from '@temporalio/client';
import { deriveUuid } from '../../src/idempotency/idempotency-key';
import { createMidtransProvider } from '../../src/providers/midtrans/midtrans-provider';
import { paymentSyncWorkflowId, reversalWorkflowId } from '../../workflows/contracts';
import type { PaymentSyncResult } from '../../workflows/contracts';
import { clientAScope, postDonation, waitForStatus } from '../support/donations';
import { closedResult, ledgerEntry, ledgerOf, ledgerWith, postWebhook } from '../support/money';
import { startMidtransStandin } from '../support/standins/midtrans';
import type { MidtransStandin } from '../support/standins/midtrans';
import { startSink } from '../support/standins/sink';
import {
  MIDTRANS_SERVER_KEY,
  createCampaign,
  donationBody,
  eventually,
  startStack,
} from '../support/stack';
import type { Stack } from '../support/stack';

/**
 * Midtrans signs only `order_id + status_code + gross_amount`: whoever saw one genuine
 * notification can resend it with every other field changed. Such copies must move no money,
 * start no workflow for a refund or chargeback Midtrans does not list, and make only a bounded
 * number of inbox rows, however many are sent. Genuine refunds still follow.
 */
describe('forged copies of a genuine Midtrans notification', () => {
  let stack: Stack;
  let midtrans: MidtransStandin;
  let sink: Awaited<ReturnType<typeof startSink>>;
  beforeAll(async () => {
    sink = await startSink();
    midtrans = await startMidtransStandin({
      serverKey: MIDTRANS_SERVER_KEY,
      notificationUrl: sink.url,
      timeScale: 0,
    });
    const adapter = createMidtransProvider({
      baseUrl: midtrans.url,
      serverKeys: [MIDTRANS_SERVER_KEY],
    });
    stack = await startStack({
      providers: new Map([['midtrans', adapter]]),
      defaultProvider: 'midtrans',
    });
  });
  afterAll(async () => {
    await stack.stop();
    await midtrans.close();
    await sink.close();
  });

  /** Relays the stand-in's next notification to galang, as Midtrans would; returns its body. */
  const relayNext = async (seen: number) => {
    const received = await eventually(async () => sink.received[seen]);
    expect(await postWebhook(stack, 'midtrans', received.body, {})).toBe(200);
    return JSON.parse(received.body) as Record<string, unknown>;
  };
  const statusReads = (transactionId: string) =>
    midtrans.calls.filter((c) => c.method === 'GET' && c.path === `/v2/${transactionId}/status`)
      .length;
  const absent = async (workflowId: string) => {
    try {
      await stack.temporal.workflow.getHandle(workflowId).describe();
      return false;
    } catch (error) {
      if (error instanceof WorkflowNotFoundError) return true;
      throw error;
    }
  };

  it('act on nothing Midtrans does not list and make a bounded number of inbox rows', async () => {
    const campaignId = await createCampaign(stack.db);
    const key = `forged-${Date.now()}`;
    const donationId = deriveUuid(clientAScope(key));
    const created = await postDonation(stack.apiUrl, key, donationBody(campaignId, 50_000));
    expect(created.status).toBe(202);
    await waitForStatus(stack, donationId, 'AWAITING_PAYMENT');
    midtrans.pay(donationId);
    const genuine = await relayNext(0);
    await waitForStatus(stack, donationId, 'CONFIRMED');
    const transactionId = String(genuine.transaction_id);
    const readsBefore = statusReads(transactionId);

    // The settlement resent with fake refunds, chargebacks and made-up statuses: all verify.
    const forged = [
      ...Array.from({ length: 30 }, (_, i) => ({
        ...genuine,
        transaction_status: 'refund',
        refund_amount: '50000.00',
        refunds: [
          {
            refund_chargeback_id: 90_000 + i,
            refund_amount: '50000.00',
            refund_key: `forged-${i}`,
            bank_confirmed_at: '2026-01-01 00:00:00',
          },
        ],
      })),
      { ...genuine, transaction_status: 'chargeback' },
      { ...genuine, transaction_status: 'partial_chargeback' },
      ...Array.from({ length: 10 }, (_, i) => ({ ...genuine, transaction_status: `made-up-${i}` })),
    ];
    for (const body of forged) {
      expect(await postWebhook(stack, 'midtrans', JSON.stringify(body), {})).toBe(200);
    }

    // The status reads they asked for found no refund and no chargeback.
    const sync = await closedResult<PaymentSyncResult>(stack, paymentSyncWorkflowId(donationId));
    expect(sync).toEqual({ followed: 0 });
    for (let i = 0; i < 30; i++) {
      expect(await absent(reversalWorkflowId(donationId, 'refund', String(90_000 + i)))).toBe(true);
    }
    expect(
      await absent(reversalWorkflowId(donationId, 'dispute', `${donationId}-chargeback`)),
    ).toBe(true);
    expect(await ledgerOf(stack, donationId)).toEqual([ledgerEntry('DONATION', '', 50_000)]);
    // One row per kind of copy: refund (1 refund, 1 confirmed), chargeback, partial, other.
    const rows = await stack.db
      .selectFrom('webhook_inbox')
      .select('event_key')
      .where('provider', '=', 'midtrans')
      .where('event_key', 'like', `${donationId}:%`)
      .execute();
    expect(rows.map((r) => r.event_key).sort()).toEqual(
      [
        `${donationId}:200:50000.00:chargeback`,
        `${donationId}:200:50000.00:other`,
        `${donationId}:200:50000.00:partial_chargeback`,
        `${donationId}:200:50000.00:refund:1:1`,
        `${donationId}:200:50000.00:settlement`,
      ].sort(),
    );
    // At most one status read per hint row: duplicates start nothing.
    expect(statusReads(transactionId) - readsBefore).toBeLessThanOrEqual(3);

    // A genuine refund is still followed from its notifications to the ledger.
    const refunded = await createMidtransProvider({
      baseUrl: midtrans.url,
      serverKeys: [MIDTRANS_SERVER_KEY],
    }).refund({
      idempotencyKey: `${donationId}-dash`,
      providerReference: transactionId,
      amount: 10_000,
      currency: 'IDR',
      reason: 'asked by the donor',
    });
    await relayNext(1);
    midtrans.confirmRefund(donationId, `${donationId}-dash`);
    await relayNext(2);
    expect(
      (await ledgerWith(stack, donationId, 2)).sort((a, b) =>
        a.entry_type.localeCompare(b.entry_type),
      ),
    ).toEqual([
      ledgerEntry('DONATION', '', 50_000),
      ledgerEntry('REFUND', refunded.refundId, -10_000),
    ]);
  });
});
