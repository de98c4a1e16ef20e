import type { Static } from '@sinclair/typebox';
import type { ReceiptDocuments } from './receipt-documents';
import type { ReceiptRecord, ReceiptRepository } from './receipt-repository';
import type { DonationReceipts, ReceiptDocumentView } from './receipt-schemas';
import { isLinkToken } from '../security/link-token';

/** The receipts' reads: a PDF by its link, a donation's documents for its client. */
export class ReceiptService {
  constructor(
    private readonly receipts: ReceiptRepository,
    private readonly documents: ReceiptDocuments,
    private readonly tokenSecrets: readonly string[],
  ) {}

  /** The PDF, rendered from the rows; undefined for an unknown number or a wrong token alike. */
  async pdf(number: string, token: string): Promise<Buffer | undefined> {
    if (!isLinkToken(this.tokenSecrets, `receipt:${number}`, token)) return undefined;
    const record = await this.receipts.find(number);
    return record && this.documents.render(this.documents.document(record));
  }

  /** A donation's receipt and credit notes, for its own client only; undefined otherwise. */
  async forDonation(
    donationId: string,
    clientId: string | undefined,
  ): Promise<Static<typeof DonationReceipts> | undefined> {
    const owner = await this.receipts.donationClient(donationId);
    if (owner === undefined || (clientId !== undefined && owner !== clientId)) return undefined;
    const records = await this.receipts.forDonation(donationId);
    const views = records.map((r) => this.view(r));
    return {
      donationId,
      receipt: views.find((v) => v.kind === 'receipt') ?? null,
      creditNotes: views.filter((v) => v.kind === 'credit-note'),
    };
  }

  private view(record: ReceiptRecord): Static<typeof ReceiptDocumentView> {
    return {
      number: record.number,
      kind: record.series,
      refersTo: record.refersTo,
      issuedAt: record.issuedAt.toISOString(),
      amount: record.amount,
      currency: record.currency,
      pdfUrl: this.documents.pdfUrl(record.number),
    };
  }
}
