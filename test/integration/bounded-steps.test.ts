import { DEV_SIMULATOR_SECRET } from '../../src/config/config';
import { ProviderRejected } from '../../src/providers/http-json';
import type { PaymentProvider } from '../../src/providers/payment-provider';
import { createSimulatorProvider } from '../../src/providers/simulator/simulator-provider';
import { waitForStatus, workflowResult } from '../support/donations';
import { donate } from '../support/reconciliation';
import { createCampaign, startStack } from '../support/stack';
import type { Stack } from '../support/stack';

/**
 * Issue 22, defect 10: a provider that answers 404 for a payment it created (or anything the
 * adapter does not map) was retried forever inside a local activity, the workflow stuck in that
 * step. Such a step now fails for good after a bounded number of attempts, and the donation ends
 * in NEEDS_REVIEW where an operator sees it.
 */
describe('a step that fails for good ends the donation for review', () => {
  let stack: Stack;
  let statusReads = 0;
  let inner: PaymentProvider | undefined;
  const gateway = (): PaymentProvider => {
    if (!inner) throw new Error('the stack is not up');
    return inner;
  };
  // The simulator's adapter, but its status API denies the payment it created.
  const forgetful = {
    name: 'simulator',
    verifyWithProvider: false,
    supports: (currency: string, method: string) => gateway().supports(currency, method),
    refundable: (method: string) => gateway().refundable(method),
    keepsMethods: (method: string) => gateway().keepsMethods(method),
    createPayment: (request) => gateway().createPayment(request),
    cancel: (reference) => gateway().cancel(reference),
    refund: (request) => gateway().refund(request),
    parseWebhook: (body, headers) => gateway().parseWebhook(body, headers),
    fetchPayment: async () => {
      statusReads++;
      throw new ProviderRejected(404, { message: 'payment not found' });
    },
  } as PaymentProvider;

  beforeAll(async () => {
    stack = await startStack({
      autoPayMs: -1,
      paymentTimeoutSeconds: 1,
      providers: new Map([['simulator', forgetful]]),
    });
    inner = createSimulatorProvider({
      baseUrl: stack.simulatorUrl,
      webhookSecrets: [DEV_SIMULATOR_SECRET],
    });
  });
  afterAll(() => stack.stop());

  test('a 404 for its own payment at the deadline: NEEDS_REVIEW after the bounded attempts', async () => {
    const campaignId = await createCampaign(stack.db);
    const id = await donate(stack, campaignId, 30_000);
    await waitForStatus(stack, id, 'NEEDS_REVIEW', 45_000);
    expect(await workflowResult(stack, id)).toMatchObject({ status: 'NEEDS_REVIEW' });
    const row = await stack.db
      .selectFrom('donations')
      .select('failure_reason')
      .where('id', '=', id)
      .executeTakeFirstOrThrow();
    expect(row.failure_reason).toBe('step-failed-for-good');
    expect(statusReads).toBe(5);
  }, 60_000);
});
