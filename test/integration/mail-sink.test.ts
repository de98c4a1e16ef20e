import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { simpleParser } from 'mailparser';
import { SMTPServer } from 'smtp-server';
import type { AddressInfo } from 'node:net';
import { MailSendError, MailSender } from '../../src/mail/mail-sender';
import { startMailSink } from '../../src/mail/mail-sink';
import type { MailSink } from '../../src/mail/mail-sink';
import { freePort } from '../support/free-port';

const FROM = 'galang <receipts@galang.test>';
const message = (messageId: string) => ({
  messageId,
  to: 'Ani <ani@example.com>',
  subject: 'Kwitansi donasi GLG-2026-000001',
  text: 'Terima kasih atas donasi Anda.',
  html: '<p>Terima kasih atas donasi Anda.</p>',
});

describe('mail over loopback SMTP', () => {
  let dir: string;
  let sink: MailSink;

  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'galang-mail-'));
    sink = await startMailSink({ host: '127.0.0.1', port: 0, dir });
  });
  afterAll(async () => {
    await sink.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it('saves what the sender sent, Message-ID and attachment bytes included', async () => {
    expect(sink.port).toBeGreaterThan(0);
    const pdf = Buffer.concat([
      Buffer.from('%PDF-1.7\n'),
      Buffer.from([0, 1, 2, 255, 254, 13, 10]),
    ]);
    const messageId = '<receipt-GLG-2026-000001.a1b2c3@galang.test>';
    const sender = new MailSender({ smtpUrl: `smtp://127.0.0.1:${sink.port}`, from: FROM });
    const result = await sender
      .send({
        ...message(messageId),
        attachments: [
          { filename: 'GLG-2026-000001.pdf', content: pdf, contentType: 'application/pdf' },
        ],
      })
      .finally(() => {
        sender.close();
      });
    expect(result.accepted).toBe(true);
    expect(result.response).toMatch(/^250 /);

    const files = sink.received();
    expect(files).toHaveLength(1);
    const [file = ''] = files;
    expect(path.dirname(file)).toBe(dir);
    expect(path.basename(file)).toMatch(
      /^\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d\.\d{3}Z-receipt-GLG-2026-000001\.a1b2c3@galang\.test\.eml$/,
    );
    // Only the finished file is in the folder: the temporary copy is gone.
    expect(await readdir(dir)).toEqual([path.basename(file)]);

    const parsed = await simpleParser(await readFile(file));
    expect(parsed.subject).toBe('Kwitansi donasi GLG-2026-000001');
    expect(parsed.messageId).toBe(messageId);
    expect(parsed.from?.value).toEqual([{ name: 'galang', address: 'receipts@galang.test' }]);
    const to = Array.isArray(parsed.to) ? parsed.to : [parsed.to];
    expect(to.flatMap((address) => address?.value ?? [])).toEqual([
      { name: 'Ani', address: 'ani@example.com' },
    ]);
    expect(parsed.text?.trim()).toBe('Terima kasih atas donasi Anda.');
    expect(parsed.attachments).toHaveLength(1);
    const [attachment] = parsed.attachments;
    expect(attachment?.filename).toBe('GLG-2026-000001.pdf');
    expect(attachment?.contentType).toBe('application/pdf');
    expect(attachment?.content.equals(pdf)).toBe(true);
  });

  it('keeps both copies of a message sent twice', async () => {
    const sender = new MailSender({ smtpUrl: `smtp://127.0.0.1:${sink.port}`, from: FROM });
    const before = sink.received().length;
    try {
      await sender.send(message('<twice@galang.test>'));
      await sender.send(message('<twice@galang.test>'));
    } finally {
      sender.close();
    }
    const copies = sink.received().slice(before);
    expect(copies).toHaveLength(2);
    expect(new Set(copies).size).toBe(2);
  });

  it('sends one message after another on one connection, and lets it go when closed', async () => {
    let opened = 0;
    let closed = 0;
    const relayClosed: (() => void)[] = [];
    const relay = new SMTPServer({
      authOptional: true,
      disabledCommands: ['AUTH', 'STARTTLS'],
      logger: false,
      onConnect(_session, callback) {
        opened++;
        callback();
      },
      onClose() {
        closed++;
        relayClosed.shift()?.();
      },
      onData(stream, _session, callback) {
        stream.resume();
        stream.on('end', () => {
          callback();
        });
      },
    });
    await new Promise<void>((resolve) => relay.listen(0, '127.0.0.1', resolve));
    const { port } = relay.server.address() as AddressInfo;
    const sender = new MailSender({ smtpUrl: `smtp://127.0.0.1:${port}`, from: FROM });
    try {
      for (const n of [1, 2, 3]) {
        expect((await sender.send(message(`<pooled-${n}@galang.test>`))).accepted).toBe(true);
      }
      expect(opened).toBe(1);
      expect(closed).toBe(0);
      const gone = new Promise<void>((resolve) => relayClosed.push(resolve));
      sender.close();
      await gone;
      expect(closed).toBe(1);
    } finally {
      sender.close();
      await new Promise<void>((resolve) => {
        relay.close(resolve);
      });
    }
  });

  it('refuses to listen beyond loopback', async () => {
    await expect(startMailSink({ host: '0.0.0.0', port: 0, dir })).rejects.toThrow(/loopback/);
  });
});

describe('mail send failures', () => {
  it('is transient when nothing listens', async () => {
    const sender = new MailSender({
      smtpUrl: `smtp://127.0.0.1:${await freePort()}`,
      from: FROM,
    });
    const error: unknown = await sender
      .send(message('<closed@galang.test>'))
      .catch((caught: unknown) => caught);
    sender.close();
    expect(error).toBeInstanceOf(MailSendError);
    expect(error).toMatchObject({ permanent: false, responseCode: undefined });
    expect((error as MailSendError).code).toMatch(/^E/);
  });

  it.each([
    [550, true],
    [451, false],
  ])('reads a %i refusal of the recipient as permanent=%s', async (responseCode, permanent) => {
    const relay = new SMTPServer({
      authOptional: true,
      disabledCommands: ['AUTH', 'STARTTLS'],
      logger: false,
      onRcptTo(_address, _session, callback) {
        callback(Object.assign(new Error('no such mailbox'), { responseCode }));
      },
    });
    await new Promise<void>((resolve) => relay.listen(0, '127.0.0.1', resolve));
    const { port } = relay.server.address() as AddressInfo;
    const sender = new MailSender({ smtpUrl: `smtp://127.0.0.1:${port}`, from: FROM });
    try {
      const error: unknown = await sender
        .send(message('<refused@galang.test>'))
        .catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(MailSendError);
      expect(error).toMatchObject({ permanent, responseCode });
    } finally {
      sender.close();
      await new Promise<void>((resolve) => {
        relay.close(resolve);
      });
    }
  });
});
