import { ProviderRejected } from '../http-json';
import type { XenditInvoice } from './xendit-protocol';

/** The invoice calls convergence needs (xendit-node v7 `InvoiceApi`). */
export interface InvoiceCalls {
  /** `GET /v2/invoices?external_id=`: every invoice made for one donation, as an array. */
  list(externalId: string): Promise<XenditInvoice[]>;
  /** `GET /v2/invoices/{id}`. */
  read(id: string): Promise<XenditInvoice>;
  /** `POST /invoices/{id}/expire!`. */
  expire(id: string): Promise<XenditInvoice>;
}

const isPaid = (invoice: XenditInvoice) =>
  invoice.status === 'PAID' || invoice.status === 'SETTLED';
const createdAt = (invoice: XenditInvoice) => {
  const at = Date.parse(invoice.created ?? '');
  return Number.isNaN(at) ? Number.MAX_SAFE_INTEGER : at;
};

/**
 * The one invoice a donation keeps: a paid one (the money came through it), else the earliest
 * made. Ties keep the list's order, which Xendit does not document (the stand-in lists oldest
 * first), so every caller that sees the same list keeps the same invoice.
 */
export function keptInvoice(invoices: readonly XenditInvoice[]): XenditInvoice | undefined {
  const byAge = [...invoices].sort((a, b) => createdAt(a) - createdAt(b));
  return byAge.find(isPaid) ?? byAge[0];
}

/** Expires a duplicate; refused (no longer pending, say), it answers what the invoice is now. */
async function expireDuplicate(calls: InvoiceCalls, id: string): Promise<XenditInvoice> {
  try {
    return await calls.expire(id);
  } catch (error) {
    if (!(error instanceof ProviderRejected) || error.status === 401) throw error;
    return calls.read(id);
  }
}

/**
 * Invoice creation has no idempotency at Xendit, so two overlapping attempts can make two
 * invoices for one donation. Each caller lists again after it creates, keeps the one invoice
 * {@link keptInvoice} picks and expires the other pending ones: overlapping callers answer the
 * same invoice and one stays payable. A duplicate paid meanwhile wins on a second look.
 */
export async function convergeInvoice(
  calls: InvoiceCalls,
  externalId: string,
  create: () => Promise<XenditInvoice>,
): Promise<XenditInvoice> {
  let listed = await calls.list(externalId);
  if (listed.length === 0) {
    const made = await create();
    const after = await calls.list(externalId);
    // The list may not show the new invoice yet; it counts all the same.
    listed = after.some((i) => i.id === made.id) ? after : [...after, made];
  }
  for (let look = 1; ; look++) {
    const kept = keptInvoice(listed);
    if (!kept) throw new Error(`Xendit listed no invoice for ${externalId}`);
    const pending = listed.filter((i) => i.id !== kept.id && i.status === 'PENDING');
    const now = await Promise.all(pending.map((i) => expireDuplicate(calls, i.id)));
    if (isPaid(kept) || !now.some(isPaid) || look === 2) return kept;
    listed = await calls.list(externalId);
  }
}
