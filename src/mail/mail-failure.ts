import { ApplicationFailure } from '@temporalio/activity';
import { MailSendError } from './mail-sender';
import { FailureType } from '../../workflows/contracts';

/**
 * Sends through `send`, turning a failed send into the activity's failure: a relay's refusal
 * for good is not retried; anything else is. The relay's reply may quote the donor's address,
 * so histories and logs get the codes only.
 */
export async function sendOrFail<T>(send: () => Promise<T>): Promise<T> {
  try {
    return await send();
  } catch (error) {
    if (!(error instanceof MailSendError)) throw error;
    throw ApplicationFailure.create({
      message: `SMTP send failed (${String(error.responseCode ?? error.code ?? 'no reply')})`,
      type: error.permanent ? FailureType.Permanent : 'MailSendFailed',
      nonRetryable: error.permanent,
    });
  }
}

/** A Message-ID from a stable name: a resend after a crash carries the same one. */
export function stableMessageId(name: string, from: string): string {
  const domain = /@([^>\s]+)>?\s*$/.exec(from)?.[1] ?? 'galang.invalid';
  return `<${name}@${domain}>`;
}
