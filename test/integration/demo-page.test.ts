import { randomBytes, randomUUID } from 'node:crypto';
import QRCode from 'qrcode';
import { donationWorkflowId } from '../../workflows/contracts';
import type { PaymentAction } from '../../workflows/contracts';
import { DonationRepository } from '../../src/donations/donation-repository';
import { LedgerRepository } from '../../src/ledger/ledger-repository';
import { productionEnv } from '../support/production-env';
import {
  CLIENT_SECRET,
  OPERATOR_SECRET,
  OTHER_CLIENT_SECRET,
  createCampaign,
  donationBody,
  startStack,
} from '../support/stack';
import type { Stack } from '../support/stack';
import { headersNamed, helmetHeaders } from '../support/helmet-headers';
import { DEMO_PAGE_HELMET_OPTIONS } from '../../src/demo-page/demo-page-plugin';
import { API_SECURITY_HEADERS } from '../../src/security/security-headers';

/** The campaign page's routes over HTTP; test/browser/ drives the page itself. */
describe('the campaign page routes, outside production', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({ noWorker: true });
  });
  afterAll(async () => {
    await stack.stop();
  });
  const get = (path: string) => fetch(`${stack.apiUrl}${path}`);

  it('serves the page at / and /campaigns/:id under a strict Content-Security-Policy', async () => {
    // Exactly @fastify/helmet's headers for the page's options: none of the API's replace them,
    // and the page keeps @fastify/static's caching, not the API's no-store.
    const helmets = await helmetHeaders(DEMO_PAGE_HELMET_OPTIONS);
    const names = [...Object.keys(helmets), ...Object.keys(API_SECURITY_HEADERS)].filter(
      (name) => name !== 'cache-control',
    );
    for (const path of ['/', '/campaigns/demo']) {
      const response = await get(path);
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toMatch(/^text\/html/);
      expect(headersNamed(response, names)).toEqual(
        headersNamed(new Response(null, { headers: helmets }), names),
      );
      expect(response.headers.get('cache-control')).toBe('public, max-age=0');
      const csp = response.headers.get('content-security-policy') ?? '';
      expect(csp).toContain("default-src 'none'");
      expect(csp).toContain("script-src 'self'");
      const html = await response.text();
      // No inline script: the one module is loaded from this origin.
      expect(html).toContain('<script type="module" src="/demo/assets/page.js"></script>');
      expect(html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
    }
    const script = await get('/demo/assets/page.js');
    expect(script.status).toBe(200);
    expect(script.headers.get('content-type')).toMatch(/javascript/);
  });

  it('serves only its listed files', async () => {
    expect((await get('/demo/assets/index.html')).status).toBe(400);
    expect((await get('/demo/assets/..%2F..%2Fdemo-page-plugin.ts')).status).toBe(400);
    expect((await get('/campaigns/not%20a%20slug')).status).toBe(400);
    // The API's own routes still deny what they do not declare.
    expect((await get('/demo/nothing-here')).status).toBe(404);
  });

  it('hands the page the development client key and where the Temporal UI is', async () => {
    const response = await get('/demo/config.json');
    expect(response.headers.get('cache-control')).toBe('no-store');
    expect(await response.json()).toEqual({
      defaultCampaignId: 'demo',
      clientKey: CLIENT_SECRET,
      temporalUi: { url: stack.config.temporal.uiUrl, namespace: 'default' },
      simulatePayments: true,
    });
  });

  it("describes a campaign with its currency's minor units", async () => {
    const id = await createCampaign(stack.db, { currency: 'USD', goalAmount: 500_00 });
    expect(await (await get(`/demo/campaigns/${id}`)).json()).toEqual({
      id,
      title: `Campaign ${id}`,
      goalAmount: 500_00,
      currency: 'USD',
      minorUnits: 2,
      acceptingDonations: true,
    });
    const missing = await get('/demo/campaigns/no-such-campaign');
    expect(missing.status).toBe(404);
    expect(await missing.json()).toMatchObject({ code: 'campaign-not-found' });
  });

  it("draws only a donation's own QR string, never text it is handed", async () => {
    // Any text drawn as a QR code on the charity's origin would pass for its own.
    expect((await get('/demo/qr.svg?text=https%3A%2F%2Fevil.example%2Fpay')).status).toBe(404);
    const donations = new DonationRepository(stack.db);
    const campaignId = await createCampaign(stack.db);
    const donationWith = async (action: PaymentAction) => {
      const donationId = randomUUID();
      await donations.insert({
        ...donationBody(campaignId),
        donationId,
        clientId: 'client-a',
        idempotencyKey: `qr-${donationId}`,
        workflowId: donationWorkflowId(donationId),
        provider: 'simulator',
        paymentTimeoutSeconds: 60,
        correlationId: donationId,
      });
      await donations.markAwaitingPayment(donationId, `sim_${donationId}`, action);
      // Credited, so reconciliation in other files finds nothing open to act on.
      await new LedgerRepository(stack.db).confirm(donationId);
      return donationId;
    };
    const qrString = `00020101021226SIMULATOR${randomUUID()}`;
    const withQr = await donationWith({ type: 'qr', value: qrString });

    const response = await get(`/demo/donations/${withQr}/qr.svg?text=something-else`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('image/svg+xml');
    expect(await response.text()).toBe(await QRCode.toString(qrString, { type: 'svg', margin: 2 }));
    const transfer = await donationWith({ type: 'virtual_account', value: 'bca:1234567890' });
    for (const [path, status] of [
      [`/demo/donations/${transfer}/qr.svg`, 404],
      [`/demo/donations/${randomUUID()}/qr.svg`, 404],
      ['/demo/donations/not-a-donation/qr.svg', 400],
    ] as const) {
      expect({ path, status: (await get(path)).status }).toEqual({ path, status });
    }
  });

  it("simulates payment only for the calling client's own donation at the simulator", async () => {
    const campaignId = await createCampaign(stack.db);
    const donationId = randomUUID();
    const donations = new DonationRepository(stack.db);
    await donations.insert({
      ...donationBody(campaignId),
      donationId,
      clientId: 'client-a',
      idempotencyKey: `page-${donationId}`,
      workflowId: donationWorkflowId(donationId),
      provider: 'simulator',
      paymentTimeoutSeconds: 60,
      correlationId: donationId,
    });
    // Credited as a whole, so reconciliation in other files finds nothing open to act on.
    await new LedgerRepository(stack.db).confirm(donationId);
    const simulate = (secret?: string) =>
      fetch(`${stack.apiUrl}/demo/donations/${donationId}/simulate-payment`, {
        method: 'POST',
        headers: secret ? { authorization: `Bearer ${secret}` } : {},
      });
    expect((await simulate()).status).toBe(401);
    expect((await simulate(OPERATOR_SECRET)).status).toBe(403);
    expect((await simulate(OTHER_CLIENT_SECRET)).status).toBe(404);
    const noPayment = await simulate(CLIENT_SECRET);
    expect(noPayment.status).toBe(400);
    expect(await noPayment.json()).toMatchObject({
      detail: 'The donation has no payment at the simulator yet.',
    });
  });
});

describe('the campaign page, by configuration', () => {
  it('is not registered with DEMO_PAGE=false', async () => {
    const stack = await startStack({ noWorker: true, env: { DEMO_PAGE: 'false' } });
    try {
      for (const path of ['/', '/campaigns/demo', '/demo/config.json', '/demo/assets/page.js']) {
        expect((await fetch(`${stack.apiUrl}${path}`)).status).toBe(404);
      }
    } finally {
      await stack.stop();
    }
  });

  it('gives no key and no payment simulation in production, even when enabled', async () => {
    const stack = await startStack({
      noWorker: true,
      env: productionEnv({
        DEMO_PAGE: 'true',
        PAYMENT_PROVIDER: 'simulator',
        ALLOW_SIMULATOR: 'true',
        SIMULATOR_WEBHOOK_SECRET: `whsec_${randomBytes(24).toString('base64')}`,
      }),
    });
    try {
      expect((await fetch(`${stack.apiUrl}/`)).status).toBe(200);
      const config = (await (await fetch(`${stack.apiUrl}/demo/config.json`)).json()) as object;
      expect(config).toMatchObject({ clientKey: null, simulatePayments: false });
      const simulate = await fetch(
        `${stack.apiUrl}/demo/donations/${randomUUID()}/simulate-payment`,
        {
          method: 'POST',
          headers: { authorization: `Bearer ${CLIENT_SECRET}` },
        },
      );
      expect(simulate.status).toBe(404);
    } finally {
      await stack.stop();
    }
  });
});
