import { createTransport } from 'nodemailer';
import type { Transporter } from 'nodemailer';
import type { MailConfig } from '../config/mail-config';

export interface MailAttachment {
  readonly filename: string;
  readonly content: Buffer;
  readonly contentType: string;
}

export interface OutgoingMail {
  /**
   * The Message-ID header, `<local@domain>`, kept as given: a retried send carries the same
   * one, so the recipient's client (and the sink) can tell a resend from a second receipt.
   */
  readonly messageId: string;
  readonly to: string;
  readonly subject: string;
  readonly text: string;
  readonly html?: string;
  readonly attachments?: readonly MailAttachment[];
}

export interface MailSendResult {
  /** The relay took the message for every recipient. */
  readonly accepted: boolean;
  /** The relay's last reply, e.g. `250 OK: queued as ...`. */
  readonly response: string;
}

/**
 * A send that failed. `permanent`: the relay refused the message for good (an SMTP 5xx reply),
 * sending it again gets the same answer; otherwise (4xx, no connection, a timeout) a retry may
 * go through.
 */
export class MailSendError extends Error {
  constructor(
    message: string,
    readonly permanent: boolean,
    /** The SMTP reply code, when the relay answered. */
    readonly responseCode: number | undefined,
    /** nodemailer's (or the socket's) error code: ECONNECTION, ETIMEDOUT, EENVELOPE, ... */
    readonly code: string | undefined,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'MailSendError';
  }
}

/** Bounds of one send; nodemailer's own defaults would hold a worker's slot for minutes. */
const TIMEOUTS = { connectionTimeout: 10_000, greetingTimeout: 10_000, socketTimeout: 30_000 };

/** nodemailer's default: sends beyond it wait in the pool's queue for a free connection. */
const POOLED_CONNECTIONS = 5;

/**
 * Sends e-mail through the configured SMTP relay on a few pooled connections: with one a
 * message, each receipt waited 110 ms on handshakes and the relay paid for every connection
 * (docs/benchmarks.md). The pool's connections stay open: whoever built the sender closes it.
 */
export class MailSender {
  private readonly transport: Transporter;

  constructor(private readonly config: Pick<MailConfig, 'smtpUrl' | 'from'>) {
    this.transport = createTransport({
      url: config.smtpUrl,
      pool: true,
      maxConnections: POOLED_CONNECTIONS,
      ...TIMEOUTS,
    });
  }

  async send(message: OutgoingMail): Promise<MailSendResult> {
    try {
      const info = await this.transport.sendMail({
        from: this.config.from,
        to: message.to,
        subject: message.subject,
        text: message.text,
        ...(message.html !== undefined && { html: message.html }),
        messageId: message.messageId,
        attachments: (message.attachments ?? []).map(({ filename, content, contentType }) => ({
          filename,
          content,
          contentType,
        })),
      });
      const accepted: unknown[] = Array.isArray(info.accepted) ? info.accepted : [];
      const rejected: unknown[] = Array.isArray(info.rejected) ? info.rejected : [];
      return {
        accepted: accepted.length > 0 && rejected.length === 0,
        response: typeof info.response === 'string' ? info.response : '',
      };
    } catch (error) {
      throw toMailSendError(error);
    }
  }

  /** Ends the pool's connections once their deliveries end; a send after it fails. */
  close(): void {
    this.transport.close();
  }
}

/** RFC 5321: 5yz refuses for good; 503 (bad sequence) is the session's state, not the message. */
export function isPermanentReply(responseCode: number): boolean {
  return responseCode >= 500 && responseCode < 600 && responseCode !== 503;
}

/** nodemailer sets `responseCode` when the relay answered, `code` always (ECONNECTION, ...). */
export function toMailSendError(error: unknown): MailSendError {
  const fields = (error ?? {}) as { responseCode?: unknown; code?: unknown; message?: unknown };
  const responseCode = typeof fields.responseCode === 'number' ? fields.responseCode : undefined;
  const code = typeof fields.code === 'string' ? fields.code : undefined;
  const permanent = responseCode !== undefined && isPermanentReply(responseCode);
  const reason = typeof fields.message === 'string' ? fields.message : String(error);
  return new MailSendError(`mail not sent: ${reason}`, permanent, responseCode, code, {
    cause: error,
  });
}
