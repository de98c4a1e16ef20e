import { createHash, timingSafeEqual } from 'node:crypto';
import { formatMinorUnits, isSupportedCurrency, parseDecimalAmount } from '../../money/currency';
import { ProviderRejected, requestJson } from '../http-json';
import { ProviderUnavailable, WebhookRejected } from '../payment-provider';
import type {
  CreatePaymentRequest,
  CreatedPayment,
  PaymentProvider,
  PaymentSnapshot,
  RefundRequest,
  WebhookEvent,
} from '../payment-provider';
import { midtransStatus } from './midtrans-protocol';
import type { MidtransNotification, MidtransTransaction } from './midtrans-protocol';

export interface MidtransOptions {
  baseUrl: string;
  /** Every server key accepted for notifications; the first one is used for API calls. */
  serverKeys: readonly string[];
}

/** Midtrans' notification signature: SHA-512 hex of order_id + status_code + gross_amount + key. */
export function midtransSignature(
  orderId: string,
  statusCode: string,
  grossAmount: string,
  serverKey: string,
): string {
  return createHash('sha512')
    .update(`${orderId}${statusCode}${grossAmount}${serverKey}`)
    .digest('hex');
}

/**
 * Midtrans Core API. The order id is our donation id, which Midtrans keeps unique: charging it
 * again answers 406, and the existing transaction is read instead, so creation is idempotent.
 * Notifications carry no timestamp, so the donation workflow confirms every one with the status
 * API before crediting (`verifyBeforeCredit`).
 */
export function createMidtransProvider(options: MidtransOptions): PaymentProvider {
  const [apiKey] = options.serverKeys;
  if (!apiKey) throw new Error('Midtrans needs a server key');
  const auth = `Basic ${Buffer.from(`${apiKey}:`).toString('base64')}`;
  const call = async (path: string, method: string, body?: unknown) => {
    const transaction = await requestJson<MidtransTransaction>(`${options.baseUrl}${path}`, {
      method,
      headers: { authorization: auth },
      body,
    });
    // Midtrans reports many errors as HTTP 200 with a status_code of its own.
    const code = Number(transaction.status_code);
    if (code >= 500) throw new ProviderUnavailable(`Midtrans ${path}: ${transaction.status_code}`);
    if (code >= 400) throw new ProviderRejected(code, transaction);
    return transaction;
  };
  const snapshot = (t: MidtransTransaction): PaymentSnapshot => ({
    providerReference: t.order_id,
    status: midtransStatus(t.transaction_status, t.fraud_status) ?? 'PENDING',
    amount: parseDecimalAmount(t.gross_amount, t.currency ?? 'IDR') ?? -1,
    currency: t.currency ?? 'IDR',
  });
  const status = (orderId: string) => call(`/v2/${encodeURIComponent(orderId)}/status`, 'GET');

  return {
    name: 'midtrans',
    verifyBeforeCredit: true,

    async createPayment(request: CreatePaymentRequest): Promise<CreatedPayment> {
      if (!isSupportedCurrency(request.currency)) throw new ProviderRejected(422, 'currency');
      let transaction: MidtransTransaction;
      try {
        transaction = await call('/v2/charge', 'POST', {
          payment_type: request.method === 'bank_transfer' ? 'bank_transfer' : 'qris',
          transaction_details: {
            order_id: request.reference,
            gross_amount: Number(formatMinorUnits(request.amount, request.currency)),
          },
          ...(request.method === 'bank_transfer' ? { bank_transfer: { bank: 'bca' } } : {}),
        });
      } catch (error) {
        if (!(error instanceof ProviderRejected) || error.status !== 406) throw error;
        transaction = await status(request.reference);
      }
      const va = transaction.va_numbers?.[0];
      const qr =
        transaction.qr_string ??
        transaction.actions?.find((a) => a.name === 'generate-qr-code')?.url;
      return {
        providerReference: transaction.order_id,
        status: snapshot(transaction).status,
        action: va
          ? { type: 'virtual_account', value: `${va.bank}:${va.va_number}` }
          : { type: 'qr', value: qr ?? '' },
      };
    },

    async fetchStatus(orderId: string): Promise<PaymentSnapshot> {
      return snapshot(await status(orderId));
    },

    async cancel(orderId: string): Promise<PaymentSnapshot> {
      return snapshot(await call(`/v2/${encodeURIComponent(orderId)}/cancel`, 'POST'));
    },

    async refund(request: RefundRequest): Promise<PaymentSnapshot> {
      const current = await status(request.providerReference);
      const currency = current.currency ?? 'IDR';
      if (!isSupportedCurrency(currency)) throw new ProviderRejected(422, 'currency');
      await call(`/v2/${encodeURIComponent(request.providerReference)}/refund`, 'POST', {
        refund_key: request.idempotencyKey,
        amount: Number(formatMinorUnits(request.amount, currency)),
        reason: request.reason,
      });
      return snapshot(await status(request.providerReference));
    },

    parseWebhook(rawBody: Buffer): WebhookEvent {
      // Nothing in the body is trusted before the signature over its own fields verifies.
      let body: MidtransNotification;
      try {
        // Checked field by field below before anything is trusted.
        body = JSON.parse(rawBody.toString('utf8')) as MidtransNotification;
      } catch {
        throw new WebhookRejected('malformed', 'body is not JSON');
      }
      const fields: unknown[] = [
        body.order_id,
        body.status_code,
        body.gross_amount,
        body.signature_key,
        body.transaction_status,
      ];
      if (!fields.every((f) => typeof f === 'string' && f.length > 0 && f.length <= 256)) {
        throw new WebhookRejected('signature', 'missing signature fields');
      }
      const offered = Buffer.from(body.signature_key, 'utf8');
      const valid = options.serverKeys.some((key) => {
        const expected = Buffer.from(
          midtransSignature(body.order_id, body.status_code, body.gross_amount, key),
          'utf8',
        );
        return offered.length === expected.length && timingSafeEqual(offered, expected);
      });
      if (!valid) throw new WebhookRejected('signature', 'signature_key does not match');
      const status = midtransStatus(body.transaction_status, body.fraud_status);
      const currency = typeof body.currency === 'string' ? body.currency : 'IDR';
      const amount = parseDecimalAmount(body.gross_amount, currency);
      if (!status || amount === undefined) {
        throw new WebhookRejected('malformed', 'unknown status or amount');
      }
      return {
        eventKey: `${body.order_id}:${body.transaction_status}:${body.status_code}`,
        donationRef: body.order_id,
        providerReference: body.order_id,
        status,
        amount,
        currency,
        occurredAt: body.transaction_time ?? new Date().toISOString(),
        raw: body,
      };
    },
  };
}
