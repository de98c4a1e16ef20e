import { sendOrFail, stableMessageId } from '../mail/mail-failure';
import type { MailSender } from '../mail/mail-sender';
import { formatReceiptAmount } from '../receipts/receipt-document';
import { isSupportedCurrency } from '../money/currency';
import type { PaymentAction } from '../../workflows/contracts';
import type { Pledge } from './pledge-repository';

/** The locale an amount is written in, by currency (receipts write them the same way). */
const LOCALES: Readonly<Record<string, string>> = { IDR: 'id-ID' };

const giftOf = (pledge: Pledge) => (pledge.interval === 'weekly' ? 'weekly gift' : 'monthly gift');

/** What the donor does with each kind of payment action. */
const HOW_TO_PAY: Readonly<Record<PaymentAction['type'], string>> = {
  qr: 'Scan this QRIS code with your banking or e-wallet app',
  virtual_account: 'Transfer to this virtual account',
  redirect: 'Confirm the payment with your card on the campaign page, using this reference',
};

/**
 * The donor's e-mails about their pledge: a period's payment action when the period needs
 * them (a QR code, a virtual account, a card that asks for authentication), and the notice
 * that the pledge was paused after every attempt of a period failed. Each Message-ID derives
 * from the pledge, the period and the attempt: a resend after a crash reads as one message.
 */
export class PledgeMailer {
  constructor(
    private readonly mail: MailSender,
    private readonly from: string,
    private readonly publicUrl: string,
  ) {}

  async sendPeriodAction(
    pledge: Pledge,
    period: string,
    attempt: number,
    action: PaymentAction,
    manageLink: string,
  ): Promise<void> {
    const amount = this.amount(pledge);
    await sendOrFail(() =>
      this.mail.send({
        messageId: stableMessageId(`pledge-${pledge.id}-${period}-${attempt}`, this.from),
        to: pledge.donor.email,
        subject: `Your ${giftOf(pledge)} of ${amount} for ${period}`,
        text:
          `Your gift of ${amount} for ${period} is ready to pay.\n\n` +
          `${HOW_TO_PAY[action.type]}:\n${action.value}\n\n` +
          `Pause, resume or cancel your pledge: ${this.publicUrl}${manageLink}\n`,
      }),
    );
  }

  async sendPaused(pledge: Pledge, period: string, manageLink: string): Promise<void> {
    const amount = this.amount(pledge);
    await sendOrFail(() =>
      this.mail.send({
        messageId: stableMessageId(`pledge-${pledge.id}-${period}-paused`, this.from),
        to: pledge.donor.email,
        subject: `We could not charge your ${giftOf(pledge)} of ${amount}`,
        text:
          `We tried to charge your gift of ${amount} for ${period} several times, without ` +
          `success, so your pledge is paused and nothing more will be charged.\n\n` +
          `To give again, resume it here; the next period asks you to pay and keeps the ` +
          `method you pay with: ${this.publicUrl}${manageLink}\n`,
      }),
    );
  }

  private amount(pledge: Pledge): string {
    if (!isSupportedCurrency(pledge.currency)) return `${pledge.amount} ${pledge.currency}`;
    return formatReceiptAmount(pledge.amount, pledge.currency, LOCALES[pledge.currency] ?? 'en-US');
  }
}
