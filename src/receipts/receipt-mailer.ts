import { ApplicationFailure } from '@temporalio/activity';
import type { BatchAttempt, ReceiptSender } from '../../activities/receipt-activities';
import { sendOrFail, stableMessageId } from '../mail/mail-failure';
import type { MailSender } from '../mail/mail-sender';
import { FailureType } from '../../workflows/contracts';
import type { MailBatchCounts } from '../../workflows/contracts';
import { formatReceiptAmount } from './receipt-document';
import type { ReceiptDocument } from './receipt-document';
import type { ReceiptDocuments } from './receipt-documents';
import type { MailDeliveryRepository } from './mail-delivery-repository';
import type { ReceiptRecord, ReceiptRepository } from './receipt-repository';

/**
 * The Message-ID of a document's e-mail: from its number, so the one repeat SMTP allows (a
 * crash between the server's 250 and our record) carries the same ID and reads as a resend.
 */
export function receiptMessageId(number: string, from: string): string {
  return stableMessageId(number, from);
}

/** Sends documents by e-mail, each delivery recorded before and after the SMTP exchange. */
export class ReceiptMailer implements ReceiptSender {
  constructor(
    private readonly receipts: ReceiptRepository,
    private readonly deliveries: MailDeliveryRepository,
    private readonly documents: ReceiptDocuments,
    private readonly mail: MailSender,
    private readonly from: string,
    /** A pledge's management link (a full URL): a period's receipt carries it. */
    private readonly pledgeLink: (pledgeId: string) => string,
  ) {}

  /**
   * Sends a batch's documents still queued, one by one, each taking the queue's row with it as
   * its delivery ends. A relay's refusal for good fails that document alone; anything else
   * (the relay away, a timeout) stops the batch and throws, and the retry sends only what is
   * still queued. A cancelled or timed-out `attempt` stops before its next document; a document
   * another attempt holds stays queued, and the batch throws for a retry.
   */
  async sendBatch(batch: string, attempt?: BatchAttempt): Promise<MailBatchCounts> {
    const result: MailBatchCounts = { sent: 0, 'sent-before': 0, 'no-address': 0, failed: 0 };
    const ended: string[] = [];
    let held = 0;
    try {
      for (const number of await this.deliveries.batchDocuments(batch)) {
        attempt?.signal.throwIfAborted();
        attempt?.heartbeat();
        try {
          const outcome = await this.send(number);
          if (outcome === 'held') {
            held++;
            continue;
          }
          result[outcome]++;
        } catch (error) {
          if (!(error instanceof ApplicationFailure && error.nonRetryable)) throw error;
          await this.deliveries.endDelivery(number, 'failed', error.message);
          result.failed++;
        }
        ended.push(number);
      }
    } finally {
      await this.deliveries.dropFromMailQueue(ended);
    }
    if (held > 0) {
      // Still queued: the retry finds them sent by the attempt holding them, or takes them over.
      throw ApplicationFailure.retryable(
        `${held} of the batch's documents held by another attempt`,
        'MailDeliveryHeld',
      );
    }
    return result;
  }

  /** What a batch still holds, when its every attempt is used: recorded failed. */
  failBatch(batch: string, error: string): Promise<number> {
    return this.deliveries.failBatch(batch, (number) => receiptMessageId(number, this.from), error);
  }

  /** One document of a batch; its queue row is {@link sendBatch}'s. */
  private async send(number: string) {
    const record = await this.receipts.find(number);
    if (!record) {
      throw ApplicationFailure.nonRetryable(`No receipt ${number}`, FailureType.Permanent);
    }
    const messageId = receiptMessageId(number, this.from);
    const begun = await this.deliveries.beginDelivery(number, messageId);
    if (begun === 'ended') return 'sent-before' as const;
    if (begun === 'held') return 'held' as const;
    if (!record.donorEmail) {
      await this.deliveries.endDelivery(number, 'no-address');
      return 'no-address' as const;
    }
    const document = this.documents.document(record);
    const pdf = await this.documents.render(document);
    try {
      await sendOrFail(() =>
        this.mail.send({
          messageId,
          to: record.donorEmail,
          ...this.message(record, document),
          attachments: [
            { filename: `${number}.pdf`, content: pdf, contentType: 'application/pdf' },
          ],
        }),
      );
    } catch (error) {
      // A refusal for good is ended by the batch; anything else is let go for the retry.
      if (error instanceof ApplicationFailure && !error.nonRetryable) {
        await this.deliveries.releaseDelivery(number, error.message);
      }
      throw error;
    }
    await this.deliveries.endDelivery(number, 'sent');
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
    if (record.refersTo) {
      return {
        subject: `Receipt ${record.number}: ${amount} counted as your donation again (${record.campaignTitle})`,
        text:
          `The ${amount} that credit note ${record.refersTo} returned to you stayed with ` +
          `"${record.campaignTitle}" in the end (the refund failed, or the dispute was decided ` +
          `for the campaign).\nReceipt ${record.number} reverses that credit note.\n\n` +
          `The receipt, also attached: ${url}\n`,
      };
    }
    return {
      subject: `Receipt ${record.number}: thank you for your donation (${record.campaignTitle})`,
      text:
        `Thank you for your donation of ${amount} to "${record.campaignTitle}".\n` +
        `Receipt ${record.number}.\n\nThe receipt, also attached: ${url}\n` +
        (record.pledgeId
          ? `\nYour pledge: pause, resume or cancel it here: ${this.pledgeLink(record.pledgeId)}\n`
          : ''),
    };
  }
}
