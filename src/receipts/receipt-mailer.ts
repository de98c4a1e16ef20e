import { ApplicationFailure } from '@temporalio/activity';
import type { ReceiptSender } from '../../activities/receipt-activities';
import { MailSendError } from '../mail/mail-sender';
import type { MailSender } from '../mail/mail-sender';
import { FailureType } from '../../workflows/contracts';
import { formatReceiptAmount } from './receipt-document';
import type { ReceiptDocument } from './receipt-document';
import type { ReceiptDocuments } from './receipt-documents';
import { renderReceiptPdf } from './receipt-pdf';
import type { ReceiptRecord, ReceiptRepository } from './receipt-repository';

/**
 * The Message-ID of a document's e-mail: from its number, so the one repeat SMTP allows (a
 * crash between the server's 250 and our record) carries the same ID and reads as a resend.
 */
export function receiptMessageId(number: string, from: string): string {
  const domain = /@([^>\s]+)>?\s*$/.exec(from)?.[1] ?? 'galang.invalid';
  return `<${number}@${domain}>`;
}

/** Sends one document by e-mail, its delivery recorded before and after the SMTP exchange. */
export class ReceiptMailer implements ReceiptSender {
  constructor(
    private readonly receipts: ReceiptRepository,
    private readonly documents: ReceiptDocuments,
    private readonly mail: MailSender,
    private readonly from: string,
  ) {}

  async send(number: string) {
    const record = await this.receipts.find(number);
    if (!record) {
      throw ApplicationFailure.nonRetryable(`No receipt ${number}`, FailureType.Permanent);
    }
    const messageId = receiptMessageId(number, this.from);
    if (!(await this.receipts.beginDelivery(number, messageId))) {
      return 'sent-before' as const;
    }
    if (!record.donorEmail) {
      await this.receipts.endDelivery(number, 'no-address');
      return 'no-address' as const;
    }
    const document = this.documents.document(record);
    const pdf = await renderReceiptPdf(document);
    try {
      await this.mail.send({
        messageId,
        to: record.donorEmail,
        ...this.message(record, document),
        attachments: [{ filename: `${number}.pdf`, content: pdf, contentType: 'application/pdf' }],
      });
    } catch (error) {
      if (!(error instanceof MailSendError)) throw error;
      // The relay's reply may quote the donor's address: histories and logs get the codes only.
      const reason = `SMTP send failed (${String(error.responseCode ?? error.code ?? 'no reply')})`;
      throw ApplicationFailure.create({
        message: reason,
        type: error.permanent ? FailureType.Permanent : 'MailSendFailed',
        nonRetryable: error.permanent,
      });
    }
    await this.receipts.endDelivery(number, 'sent');
    return 'sent' as const;
  }

  private message(
    record: ReceiptRecord,
    document: ReceiptDocument,
  ): { subject: string; text: string } {
    const amount = formatReceiptAmount(document.amount, document.currency, document.locale);
    const url = document.verificationUrl;
    if (record.series === 'credit-note') {
      return {
        subject: `Credit note ${record.number}: ${amount} returned (${record.campaignTitle})`,
        text:
          `${amount} of your donation to "${record.campaignTitle}" went back to you.\n` +
          `Credit note ${record.number} reverses receipt ${record.refersTo ?? '(none)'}.\n\n` +
          `The credit note, also attached: ${url}\n`,
      };
    }
    return {
      subject: `Receipt ${record.number}: thank you for your donation (${record.campaignTitle})`,
      text:
        `Thank you for your donation of ${amount} to "${record.campaignTitle}".\n` +
        `Receipt ${record.number}.\n\nThe receipt, also attached: ${url}\n`,
    };
  }
}
