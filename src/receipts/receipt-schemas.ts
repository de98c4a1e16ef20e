import { Type } from '@sinclair/typebox';
import { RECEIPT_NUMBER_PATTERN } from './receipt-number';

export const ReceiptFileParams = Type.Object({
  number: Type.String({ pattern: RECEIPT_NUMBER_PATTERN, maxLength: 40 }),
});

/** Other parameters are let through: a mail client's click tracking may add some. */
export const ReceiptFileQuery = Type.Object({
  token: Type.String({ minLength: 1, maxLength: 128 }),
});

export const ReceiptDocumentView = Type.Object({
  number: Type.String({ examples: ['GLG-2026-000123'] }),
  kind: Type.Union([Type.Literal('receipt'), Type.Literal('credit-note')]),
  /** A credit note's receipt. */
  refersTo: Type.Union([Type.String(), Type.Null()]),
  issuedAt: Type.String({ format: 'date-time' }),
  amount: Type.Integer({ description: "Minor units of the campaign's currency" }),
  currency: Type.String(),
  /** The PDF, with its token: the link the e-mail carries. */
  pdfUrl: Type.String(),
});

export const DonationReceipts = Type.Object({
  donationId: Type.String(),
  /** Null until the organization's writer has numbered the confirmation (seconds). */
  receipt: Type.Union([ReceiptDocumentView, Type.Null()]),
  creditNotes: Type.Array(ReceiptDocumentView),
});
