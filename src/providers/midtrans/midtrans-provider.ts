import { ProviderRejected, requestJson } from '../http-json';
import { ProviderUnavailable } from '../payment-provider';
import type {
  CancelResult,
  CreatePaymentRequest,
  CreatedPayment,
  PaymentProvider,
  RefundRequest,
  WebhookEvent,
} from '../payment-provider';
import type { PaymentAction, PaymentSnapshot, RefundRecord } from '../../../workflows/contracts';
import { parseMidtransNotification } from './midtrans-notification';
import { midtransSnapshot, refundRecord } from './midtrans-protocol';
import type { MidtransTransaction } from './midtrans-protocol';

export { midtransSignature } from './midtrans-notification';

export interface MidtransOptions {
  baseUrl: string;
  /** Every server key accepted for notifications; the first one is used for API calls. */
  serverKeys: readonly string[];
}

/**
 * The Core API payment types galang charges, by galang's method name. Refund is documented for
 * credit_card, gopay, shopeepay, dana, ovo, QRIS, kredivo and akulaku only: bank transfers
 * (virtual accounts, Mandiri bill) cannot be refunded through the API.
 */
const METHODS: Record<string, { charge: object; refundable: boolean }> = {
  qris: { charge: { payment_type: 'qris', qris: { acquirer: 'gopay' } }, refundable: true },
  bank_transfer: {
    charge: { payment_type: 'bank_transfer', bank_transfer: { bank: 'bca' } },
    refundable: false,
  },
  echannel: {
    charge: {
      payment_type: 'echannel',
      echannel: { bill_info1: 'Donation', bill_info2: 'galang' },
    },
    refundable: false,
  },
};

/** Midtrans allows only letters, digits, `-` and `_` in a refund_key (no length is documented). */
const REFUND_KEY = /^[A-Za-z0-9_-]+$/;

/** Midtrans' "already exists": a duplicate order_id on charge, a duplicate refund_key on refund. */
class Duplicate extends Error {}

/**
 * Midtrans Core API. The order id is our donation id, which Midtrans keeps unique: charging it
 * again answers 406 and the existing transaction is read instead. Notifications carry no
 * timestamp and their signature leaves the status out, so every event is confirmed with the
 * status API first (`verifyWithProvider`).
 */
export function createMidtransProvider(options: MidtransOptions): PaymentProvider {
  const [apiKey] = options.serverKeys;
  if (!apiKey) throw new Error('Midtrans needs a server key');
  const auth = `Basic ${Buffer.from(`${apiKey}:`).toString('base64')}`;

  /** One call; the answer's own status_code decides (HTTP is 200 for most errors). */
  const call = async (path: string, method: string, body?: unknown) => {
    let answer: MidtransTransaction;
    try {
      answer = await requestJson<MidtransTransaction>(`${options.baseUrl}${path}`, {
        method,
        headers: { authorization: auth },
        body,
      });
    } catch (error) {
      const carried =
        error instanceof ProviderRejected && (error.body as MidtransTransaction | undefined);
      if (!carried || typeof carried.status_code !== 'string') throw error;
      answer = carried;
    }
    const code = Number(answer.status_code);
    // 407 is the status read of an expired transaction, not an error (midtrans-nodejs-client).
    if (code < 400 || code === 407) return answer;
    if (code === 406) throw new Duplicate(answer.status_message);
    if (code === 429 || code >= 500) {
      throw new ProviderUnavailable(`Midtrans ${path}: ${answer.status_code}`);
    }
    throw new ProviderRejected(code, answer);
  };
  const status = (id: string) => call(`/v2/${encodeURIComponent(id)}/status`, 'GET');

  const actionOf = (t: MidtransTransaction): PaymentAction => {
    const va = t.va_numbers?.[0];
    if (va) return { type: 'virtual_account', value: `${va.bank}:${va.va_number}` };
    if (t.bill_key && t.biller_code) {
      return { type: 'virtual_account', value: `mandiri:${t.biller_code}:${t.bill_key}` };
    }
    const qr = t.actions?.find((a) => a.name === 'generate-qr-code')?.url;
    if (t.qr_string) return { type: 'qr', value: t.qr_string };
    // A status read carries no actions: the documented QR image URL is built from the id.
    return {
      type: 'qr',
      value: qr ?? `${options.baseUrl}/v2/qris/${t.transaction_id ?? t.order_id}/qr-code`,
    };
  };

  return {
    name: 'midtrans',
    verifyWithProvider: true,

    // Midtrans processes Rupiah only (Bank Indonesia regulation), without decimals.
    supports: (currency, method) => currency === 'IDR' && Object.hasOwn(METHODS, method),
    refundable: (method) => METHODS[method]?.refundable ?? false,
    // QRIS, virtual accounts and Mandiri Bill need the donor every time; a saved card token or
    // GoPay tokenization needs a recurring MID galang does not take (docs/pledges.md).
    keepsMethods: () => false,

    async createPayment(request: CreatePaymentRequest): Promise<CreatedPayment> {
      const method = Object.hasOwn(METHODS, request.method) ? METHODS[request.method] : undefined;
      if (request.currency !== 'IDR' || !method) {
        throw new ProviderRejected(422, {
          status_message: 'Midtrans takes IDR qris/bank_transfer/echannel',
        });
      }
      let transaction: MidtransTransaction;
      try {
        transaction = await call('/v2/charge', 'POST', {
          ...method.charge,
          transaction_details: { order_id: request.donationId, gross_amount: request.amount },
        });
      } catch (error) {
        if (!(error instanceof Duplicate)) throw error;
        transaction = await status(request.donationId);
      }
      return {
        providerReference: transaction.transaction_id ?? transaction.order_id,
        status: midtransSnapshot(transaction).status,
        action: actionOf(transaction),
      };
    },

    async fetchPayment(id: string): Promise<PaymentSnapshot> {
      return midtransSnapshot(await status(id));
    },

    async cancel(id: string): Promise<CancelResult> {
      try {
        const canceled = await call(`/v2/${encodeURIComponent(id)}/cancel`, 'POST');
        return { accepted: true, payment: midtransSnapshot(canceled) };
      } catch (error) {
        // 412: the status can no longer be changed; closed already, or paid.
        if (!(error instanceof ProviderRejected) || error.status !== 412) throw error;
        const payment = midtransSnapshot(await status(id));
        return { accepted: payment.status !== 'PAID' && payment.status !== 'PENDING', payment };
      }
    },

    async refund(request: RefundRequest): Promise<RefundRecord> {
      if (!REFUND_KEY.test(request.idempotencyKey)) {
        throw new ProviderRejected(400, { status_message: 'refund_key allows [A-Za-z0-9_-] only' });
      }
      if (request.currency !== 'IDR')
        throw new ProviderRejected(422, { status_message: 'IDR only' });
      const path = `/v2/${encodeURIComponent(request.providerReference)}/refund`;
      const ours = async (fallback?: RefundRecord): Promise<RefundRecord> => {
        const read = await status(request.providerReference);
        const found = read.refunds?.find((r) => r.refund_key === request.idempotencyKey);
        if (found) return refundRecord(found);
        // Not in refunds[]: the first attempt was denied by the bank, which books nothing.
        return (
          fallback ?? {
            refundId: `key-${request.idempotencyKey}`,
            status: 'FAILED',
            amount: request.amount,
          }
        );
      };
      let answer: MidtransTransaction;
      try {
        answer = await call(path, 'POST', {
          refund_key: request.idempotencyKey,
          amount: request.amount,
          reason: request.reason.slice(0, 255),
        });
      } catch (error) {
        // 406 "Duplicate refund ID": this refund_key was used; the refund is the one it made.
        if (error instanceof Duplicate) return ours();
        throw error;
      }
      const refundId = String(answer.refund_chargeback_id ?? `key-${request.idempotencyKey}`);
      // 202 "Refund denied by the bank": the payment stays settled, nothing moved.
      if (answer.status_code === '202')
        return { refundId, status: 'FAILED', amount: request.amount };
      return ours({ refundId, status: 'PENDING', amount: request.amount });
    },

    parseWebhook(rawBody: Buffer): WebhookEvent {
      return parseMidtransNotification(rawBody, options.serverKeys);
    },
  };
}
