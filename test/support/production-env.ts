import { randomBytes } from 'node:crypto';

/**
 * A production environment that boots: real-looking secrets of sufficient length, one per role,
 * Stripe in live mode as the provider (the simulator and test-mode keys are refused in
 * production), a payload key, a metrics token and a receipt-token key of its own, and an SMTP server and
 * organization to send receipts as. Tests change one thing at a time
 * and watch the boot refuse it.
 */
export function productionEnv(overrides: Record<string, string> = {}): Record<string, string> {
  return {
    NODE_ENV: 'production',
    API_KEYS: 'shop:prod-client-secret-0123456789',
    OPERATOR_KEYS: 'ops:prod-operator-secret-0123456789',
    CODEC_KEYS: 'ui-proxy:prod-codec-secret-0123456789',
    TEMPORAL_PAYLOAD_KEYS: `p1:${randomBytes(32).toString('base64')}`,
    METRICS_TOKEN: 'prod-metrics-token-0123456789',
    PAYMENT_PROVIDER: 'stripe',
    STRIPE_SECRET_KEY: 'sk_live_production_like',
    STRIPE_WEBHOOK_SECRETS: 'whsec_production_like_secret',
    SMTP_URL: 'smtp://127.0.0.1:2525',
    MAIL_FROM: 'Yayasan Contoh <receipts@example.org>',
    ORG_NAME: 'Yayasan Contoh',
    ORG_ADDRESS: 'Jl. Merdeka No. 1, Jakarta',
    ORG_TAX_ID: '01.234.567.8-901.000',
    RECEIPT_TOKEN_SECRETS: 'r1:prod-receipt-token-secret-0123456789',
    ...overrides,
  };
}
