import { randomUUID } from 'node:crypto';
import { link, mkdir, unlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import type { Readable } from 'node:stream';
import { SMTPServer } from 'smtp-server';
import type { Logger } from 'pino';

export interface MailSinkOptions {
  /** A loopback address: the sink has no authentication, so nothing else may reach it. */
  readonly host: string;
  /** 0 picks a free port; the handle reports the real one. */
  readonly port: number;
  readonly dir: string;
  readonly log?: Pick<Logger, 'info' | 'warn'>;
}

export interface MailSink {
  readonly port: number;
  readonly dir: string;
  stop(): Promise<void>;
  /** Paths of the `.eml` files saved since start, in the order they arrived. */
  received(): string[];
}

/** Big enough for a receipt PDF with room to spare; a larger message is refused with 552. */
export const MAIL_SINK_SIZE_LIMIT = 10 * 1024 * 1024;

/**
 * The development SMTP server: accepts every message (no AUTH, no STARTTLS) on a loopback port
 * and saves its raw bytes as `<dir>/<time>-<message-id>.eml` (time is ISO 8601 with `-` for
 * `:`), so what galang sent can be opened in a mail client or parsed by a test.
 */
export async function startMailSink(options: MailSinkOptions): Promise<MailSink> {
  if (!isLoopback(options.host)) {
    throw new Error(`the mail sink listens on loopback only, not ${options.host}`);
  }
  const dir = path.resolve(options.dir);
  await mkdir(dir, { recursive: true });
  const saved: string[] = [];

  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['AUTH', 'STARTTLS'],
    size: MAIL_SINK_SIZE_LIMIT,
    logger: false,
    // Open sessions (a client that never quits) must not hold `npm start`'s shutdown for 30 s.
    closeTimeout: 1_000,
    onData(stream, _session, callback) {
      readAll(stream)
        .then(async (raw) => {
          if (stream.sizeExceeded) {
            callback(Object.assign(new Error('message too large'), { responseCode: 552 }));
            return;
          }
          const file = await save(dir, raw);
          saved.push(file);
          options.log?.info({ file }, 'mail sink saved a message');
          callback(null, `saved as ${path.basename(file)}`);
        })
        .catch((error: unknown) => {
          options.log?.warn({ err: error }, 'mail sink could not save a message');
          callback(Object.assign(new Error('could not save the message'), { responseCode: 451 }));
        });
    },
  });
  server.on('error', (error) => {
    options.log?.warn({ err: error }, 'mail sink error');
  });

  await new Promise<void>((resolve, reject) => {
    server.server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.server.address() as AddressInfo;
  return {
    port,
    dir,
    received: () => [...saved],
    stop: () =>
      new Promise<void>((resolve) => {
        server.close(resolve);
      }),
  };
}

async function readAll(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** Written under a temporary name and linked, so a reader of the folder never sees half a file. */
async function save(dir: string, raw: Buffer): Promise<string> {
  const stamp = new Date().toISOString().replaceAll(':', '-');
  const base = `${stamp}-${fileNamePart(messageIdOf(raw))}`;
  const temporary = path.join(dir, `.${randomUUID()}.tmp`);
  await writeFile(temporary, raw, { flag: 'wx' });
  try {
    // The same message sent twice in one millisecond keeps both copies: a resend is worth seeing.
    for (let attempt = 0; ; attempt += 1) {
      const file = path.join(dir, `${base}${attempt === 0 ? '' : `-${attempt}`}.eml`);
      try {
        await link(temporary, file);
        return file;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      }
    }
  } finally {
    await unlink(temporary).catch(() => undefined);
  }
}

/** The Message-ID header of a raw message (unfolded), without its angle brackets. */
export function messageIdOf(raw: Buffer): string | undefined {
  const end = raw.indexOf('\r\n\r\n');
  const header = raw
    .subarray(0, end === -1 ? Math.min(raw.length, 64 * 1024) : end)
    .toString('latin1')
    .replace(/\r?\n[ \t]+/g, ' ');
  const match = /^message-id:[ \t]*<?([^>\r\n]*)>?/im.exec(header);
  const id = match?.[1]?.trim();
  return id === undefined || id === '' ? undefined : id;
}

function fileNamePart(messageId: string | undefined): string {
  if (messageId === undefined) return 'no-message-id';
  return messageId.replace(/[^A-Za-z0-9._@+-]/g, '_').slice(0, 120);
}

function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || /^127\.\d+\.\d+\.\d+$/.test(host);
}
