import { randomUUID } from 'node:crypto';
import { MockActivityEnvironment } from '@temporalio/testing';
import { createReversalActivities } from '../../activities/reversal-activities';
import type { ActivityDeps } from '../../activities/activity-deps';
import type { RefundRecord } from '../../workflows/contracts';
import { createMidtransProvider } from '../../src/providers/midtrans/midtrans-provider';
import { startMidtransStandin } from '../support/standins/midtrans';
import type { MidtransStandin } from '../support/standins/midtrans';
import { startSink } from '../support/standins/sink';

/**
 * Issue 22, defect 3: an operator's refund key was `<donation>-refund-<request key>`, 80
 * characters for two UUIDs, and the Midtrans adapter refused anything over 64 after the operator
 * had been told 202: no refund ever reached Midtrans.
 */
describe('an operator refund reaches Midtrans whatever its request key', () => {
  const serverKey = 'SB-Mid-server-refund-key';
  let midtrans: MidtransStandin;
  let sink: Awaited<ReturnType<typeof startSink>>;
  beforeAll(async () => {
    sink = await startSink();
    midtrans = await startMidtransStandin({ serverKey, notificationUrl: sink.url, timeScale: 0 });
  });
  afterAll(async () => {
    await midtrans.close();
    await sink.close();
  });

  test('the refund activity sends a refund_key Midtrans takes, the same on every attempt', async () => {
    const provider = createMidtransProvider({ baseUrl: midtrans.url, serverKeys: [serverKey] });
    const donationId = randomUUID();
    const created = await provider.createPayment({
      idempotencyKey: `${donationId}:create`,
      donationId,
      amount: 26_000,
      currency: 'IDR',
      method: 'qris',
      description: 'Donation',
    });
    midtrans.pay(created.providerReference);
    const deps = {
      donations: { findById: async () => ({ paymentMethod: 'qris' }) },
      providers: new Map([['midtrans', provider]]),
    } as unknown as ActivityDeps;
    const activities = createReversalActivities(deps);
    const input = {
      donationId,
      campaignId: 'c-refund-key',
      provider: 'midtrans',
      providerReference: created.providerReference,
      verifyWithProvider: true,
      amount: 10_000,
      currency: 'IDR',
      reason: 'asked by the donor',
      requestKey: randomUUID(),
    };
    const environment = new MockActivityEnvironment();
    const refund = (request: typeof input) => activities.requestRefund(request);
    const first: RefundRecord = await environment.run(refund, input);
    const again: RefundRecord = await environment.run(refund, input);
    expect(first).toMatchObject({ status: 'PENDING', amount: 10_000 });
    expect(again.refundId).toBe(first.refundId);
    expect(midtrans.calls.filter((c) => c.path.endsWith('/refund'))).toHaveLength(2);
    // Midtrans' own record: one refund, under a key derived from the donation.
    const status = await fetch(`${midtrans.url}/v2/${created.providerReference}/status`, {
      headers: { authorization: `Basic ${Buffer.from(`${serverKey}:`).toString('base64')}` },
    });
    const { refunds } = (await status.json()) as { refunds: { refund_key: string }[] };
    expect(refunds).toHaveLength(1);
    expect(refunds[0]?.refund_key).toMatch(/^[A-Za-z0-9_-]{1,64}$/);
    expect(refunds[0]?.refund_key.startsWith(donationId)).toBe(true);
  });
});
