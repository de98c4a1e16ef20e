import { ProviderRejected } from '../../src/providers/http-json';
import type { PaymentProvider } from '../../src/providers/payment-provider';
import { createMidtransProvider } from '../../src/providers/midtrans/midtrans-provider';
import { createStripeProvider } from '../../src/providers/stripe/stripe-provider';
import { createXenditProvider } from '../../src/providers/xendit/xendit-provider';
import { fakeMidtrans, fakeStripe, fakeXendit } from '../support/fake-gateways';
import type { FakeGateway } from '../support/fake-gateways';

const request = (reference: string) => ({
  idempotencyKey: `${reference}:create`,
  reference,
  amount: 50_000,
  currency: 'IDR',
  method: 'qris',
  description: 'Donation to demo',
});

/**
 * Each adapter's HTTP client against a loopback server that answers like the provider's
 * documented API: create is idempotent, status reads normalize, cancel and refund work once.
 */
describe.each([
  {
    name: 'midtrans',
    secret: 'SB-Mid-server-key',
    gateway: () => fakeMidtrans('SB-Mid-server-key'),
    provider: (url: string, key: string) =>
      createMidtransProvider({ baseUrl: url, serverKeys: [key] }),
    chargeKey: (reference: string) => reference,
    paid: 'settlement',
  },
  {
    name: 'xendit',
    secret: 'xnd_development_key',
    gateway: () => fakeXendit('xnd_development_key'),
    provider: (url: string, key: string) =>
      createXenditProvider({ baseUrl: url, secretKey: key, callbackTokens: ['t'] }),
    chargeKey: (reference: string) => `${reference}:create`,
    paid: 'PAID',
  },
  {
    name: 'stripe',
    secret: 'sk_test_key',
    gateway: () => fakeStripe('sk_test_key'),
    provider: (url: string, key: string) =>
      createStripeProvider({ baseUrl: url, secretKey: key, webhookSecrets: ['whsec_x'] }),
    chargeKey: (reference: string) => `${reference}:create`,
    paid: 'succeeded',
  },
])('$name adapter', ({ secret, gateway, provider, chargeKey, paid }) => {
  let fake: FakeGateway;
  let adapter: PaymentProvider;
  beforeAll(async () => {
    fake = await gateway();
    adapter = provider(fake.url, secret);
  });
  afterAll(async () => {
    await fake.close();
  });

  it('creates a payment once however often it is asked', async () => {
    const reference = `don-${Date.now()}`;
    const first = await adapter.createPayment(request(reference));
    const second = await adapter.createPayment(request(reference));
    expect(second.providerReference).toBe(first.providerReference);
    expect(first.status).toBe('PENDING');
    expect(first.action.value).not.toBe('');
    expect(fake.charges.get(chargeKey(reference))).toBe(1);
  });

  it('reads and normalizes the status, in our minor units', async () => {
    const created = await adapter.createPayment(request(`don-status-${Date.now()}`));
    expect(await adapter.fetchStatus(created.providerReference)).toMatchObject({
      status: 'PENDING',
      amount: 50_000,
      currency: 'IDR',
    });
    fake.set(created.providerReference, paid);
    expect((await adapter.fetchStatus(created.providerReference)).status).toBe('PAID');
  });

  it('cancels an unpaid payment', async () => {
    const created = await adapter.createPayment(request(`don-cancel-${Date.now()}`));
    const cancelled = await adapter.cancel(created.providerReference);
    expect(['CANCELED', 'EXPIRED']).toContain(cancelled.status);
  });

  it('refunds once under one idempotency key', async () => {
    const reference = `don-refund-${Date.now()}`;
    const created = await adapter.createPayment(request(reference));
    fake.set(created.providerReference, paid);
    const refund = {
      idempotencyKey: `${reference}:refund`,
      providerReference: created.providerReference,
      amount: 50_000,
      reason: 'asked',
    };
    await adapter.refund(refund);
    await adapter.refund(refund);
    expect(fake.refunds.get(`${reference}:refund`)).toBe(1);
  });

  it('reports bad credentials as a final rejection, not a retryable outage', async () => {
    const wrong = provider(fake.url, 'wrong-key');
    await expect(wrong.createPayment(request(`don-auth-${Date.now()}`))).rejects.toBeInstanceOf(
      ProviderRejected,
    );
  });
});
