import { isSupportedCurrency } from '../money/currency';
import type { ReceiptDocument } from './receipt-document';
import type { ReceiptFonts } from './receipt-fonts';
import { renderReceiptPdf } from './receipt-pdf';
import type { ReceiptRecord } from './receipt-repository';
import { linkToken } from '../security/link-token';

/** The organization a deployment issues documents for, and where their links point. */
export interface ReceiptSettings {
  organization: { name: string; address: string; taxId: string };
  timeZone: string;
  /** The API's public base URL: the links in the mails and on the PDFs. */
  publicUrl: string;
  /** The link tokens' rotation list: the first signs, every one verifies. */
  tokenSecrets: readonly string[];
}

/** The locale amounts and dates are written in, by the campaign's currency. */
const LOCALES: Record<string, string> = { IDR: 'id-ID' };

/** Turns a numbered ledger row into what its PDF and e-mail show, and renders the PDF. */
export class ReceiptDocuments {
  constructor(
    private readonly settings: ReceiptSettings,
    private readonly fonts: ReceiptFonts,
  ) {}

  /** The document's PDF, the same bytes every time. */
  render(document: ReceiptDocument): Promise<Buffer> {
    return renderReceiptPdf(document, this.fonts);
  }

  /** The PDF's link, with its token: what the e-mail carries and the client's API returns. */
  pdfUrl(number: string): string {
    const secret = this.settings.tokenSecrets[0];
    if (secret === undefined) throw new Error('No receipt token secret is configured');
    const token = linkToken(secret, `receipt:${number}`);
    return `${this.settings.publicUrl}/v1/receipts/${number}.pdf?token=${token}`;
  }

  document(record: ReceiptRecord): ReceiptDocument {
    if (!isSupportedCurrency(record.currency)) {
      throw new Error(`Receipt ${record.number}: unsupported currency ${record.currency}`);
    }
    return {
      kind: record.series,
      number: record.number,
      ...(record.refersTo ? { refersTo: record.refersTo } : {}),
      organization: this.settings.organization,
      campaignTitle: record.campaignTitle,
      // The document may be forwarded: an anonymous donor stays anonymous on it, too.
      donorName: record.donorAnonymous ? 'Anonymous' : record.donorName,
      amount: record.amount,
      currency: record.currency,
      locale: LOCALES[record.currency] ?? 'en-US',
      // When the money moved: the number's year is that moment's, in the same zone.
      issuedAt: record.movedAt,
      timeZone: this.settings.timeZone,
      paymentMethod: record.paymentMethod,
      verificationUrl: this.pdfUrl(record.number),
    };
  }
}
