import path from 'node:path';
import { productionEnv } from '../support/production-env';
import { loadConfig } from '../../src/config/config';
import { problemsOf } from '../support/config-problems';
import { DEV_RECEIPT_TOKEN_SECRETS, sinkHostOf } from '../../src/config/mail-config';

describe('mail configuration', () => {
  it('sends to the local sink by default, outside production', () => {
    const { mail } = loadConfig({ DATA_DIR: '/tmp/galang-data' });
    expect(mail).toEqual({
      smtpUrl: 'smtp://127.0.0.1:2525',
      from: 'galang <receipts@galang.test>',
      sinkPort: 2525,
      sinkDir: path.resolve('/tmp/galang-data/mail'),
      organization: expect.objectContaining({
        timeZone: 'Asia/Jakarta',
        receiptPrefix: 'GLG',
      }) as unknown,
      receiptTokenSecrets: new Map([DEV_RECEIPT_TOKEN_SECRETS.split(':') as [string, string]]),
      receiptsIntervalSeconds: 5,
    });
    expect(mail.organization.name).toMatch(/not a real organization/);
    expect(Object.isFrozen(mail.organization)).toBe(true);
    expect(sinkHostOf(mail)).toBe('127.0.0.1');
    expect(loadConfig({ MAIL_SINK_PORT: '2600' }).mail.smtpUrl).toBe('smtp://127.0.0.1:2600');
  });

  it('runs no sink when SMTP_URL names another server', () => {
    expect(sinkHostOf(loadConfig({ SMTP_URL: 'smtp://mail.example.org:2525' }).mail)).toBe(
      undefined,
    );
    expect(sinkHostOf(loadConfig({ SMTP_URL: 'smtp://127.0.0.1:2526' }).mail)).toBe(undefined);
    expect(sinkHostOf(loadConfig({ SMTP_URL: 'smtps://127.0.0.1:2525' }).mail)).toBe(undefined);
  });

  it('refuses what it cannot send with or print on a receipt', () => {
    expect(
      problemsOf({
        SMTP_URL: 'http://mail.example.org',
        MAIL_FROM: 'receipts at example.org',
        ORG_TIME_ZONE: 'Asia/Atlantis',
        RECEIPT_PREFIX: 'glg-',
        RECEIPT_TOKEN_SECRETS: 'r1:short',
      }),
    ).toEqual([
      'SMTP_URL must be an smtp:// or smtps:// URL',
      'MAIL_FROM must be "Name <address>" or an address, got "receipts at example.org"',
      'ORG_TIME_ZONE must be an IANA time zone (e.g. Asia/Jakarta), got "Asia/Atlantis"',
      'RECEIPT_PREFIX must be 2 to 8 of A-Z 0-9, got "glg-"',
      'RECEIPT_TOKEN_SECRETS: the secret of "r1" must have at least 8 characters',
    ]);
    expect(problemsOf({ MAIL_FROM: 'receipts@example.org', RECEIPT_PREFIX: 'YKC2026' })).toEqual(
      [],
    );
  });

  it('demands the relay, the sender, the organization and token keys in production', () => {
    const unset = Object.fromEntries(
      [
        'SMTP_URL',
        'MAIL_FROM',
        'ORG_NAME',
        'ORG_ADDRESS',
        'ORG_TAX_ID',
        'RECEIPT_TOKEN_SECRETS',
      ].map((name) => [name, '']),
    );
    expect(problemsOf(productionEnv(unset))).toEqual([
      'SMTP_URL is required',
      'MAIL_FROM is required',
      'ORG_NAME is required',
      'ORG_ADDRESS is required',
      'ORG_TAX_ID is required',
      'RECEIPT_TOKEN_SECRETS is required (id:secret,id:secret)',
    ]);
    expect(loadConfig(productionEnv()).mail.organization).toEqual({
      name: 'Yayasan Contoh',
      address: 'Jl. Merdeka No. 1, Jakarta',
      taxId: '01.234.567.8-901.000',
      timeZone: 'Asia/Jakarta',
      receiptPrefix: 'GLG',
    });
  });

  it('refuses the development token key, short keys and shared ones in production', () => {
    expect(
      problemsOf(
        productionEnv({
          RECEIPT_TOKEN_SECRETS: `r0:0123456789abcdef,${DEV_RECEIPT_TOKEN_SECRETS}`,
        }),
      ),
    ).toEqual([
      'RECEIPT_TOKEN_SECRETS: "demo-receipt" is the public development value; set a secret of its own',
    ]);
    expect(problemsOf(productionEnv({ RECEIPT_TOKEN_SECRETS: 'r1:only-12char' }))).toEqual([
      'RECEIPT_TOKEN_SECRETS: the secret of "r1" must have at least 16 characters in production',
    ]);
    expect(
      problemsOf(productionEnv({ RECEIPT_TOKEN_SECRETS: 'r1:prod-client-secret-0123456789' })),
    ).toEqual([
      'API_KEYS "shop" and RECEIPT_TOKEN_SECRETS "r1" share one secret: give each role its own',
    ]);
  });
});
