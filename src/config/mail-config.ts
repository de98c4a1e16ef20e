import path from 'node:path';
import type { EnvReader } from './env-reader';
import { isTimeZone } from './time-zone';

/** The development receipt-token key: public, so production refuses it (by value). */
export const DEV_RECEIPT_TOKEN_SECRETS = 'demo-receipt:receipt-token-secret';
export const DEV_MAIL_FROM = 'galang <receipts@galang.test>';

/** The organization a receipt is issued by. */
export interface ReceiptOrganization {
  readonly name: string;
  readonly address: string;
  /** The organization's tax number (NPWP in Indonesia), printed on every receipt. */
  readonly taxId: string;
  /** IANA time zone a receipt's dates are written in. */
  readonly timeZone: string;
  /** Receipt numbers start with it: 2 to 8 of A-Z 0-9. */
  readonly receiptPrefix: string;
}

/** Where e-mail goes, who it is from, and what receipts say about the organization. */
export interface MailConfig {
  /** `smtp://` or `smtps://`, credentials in the URL; in development the sink below. */
  readonly smtpUrl: string;
  /** The From header: `Name <address>` or a bare address. */
  readonly from: string;
  /** Port of the development mail sink (`npm start` runs it when SMTP_URL points at it). */
  readonly sinkPort: number;
  /** Where the sink saves each message as a `.eml` file. */
  readonly sinkDir: string;
  readonly organization: ReceiptOrganization;
  /**
   * Keys of the receipt links' tokens, by id: the first signs, all verify, so a key is
   * rotated by listing the new one first and dropping the old once its links have expired.
   */
  readonly receiptTokenSecrets: ReadonlyMap<string, string>;
  /** How often the organization's writer numbers new confirmations; 0: no schedule. */
  readonly receiptsIntervalSeconds: number;
}

/** Development stand-ins, so a receipt made on a laptop is visibly not a real one. */
const DEV_ORGANIZATION = {
  name: 'galang demo foundation (not a real organization)',
  address: 'Jl. Contoh No. 1, Jakarta 10110, Indonesia',
  taxId: '00.000.000.0-000.000',
};

const ADDRESS = '[^\\s<>@",]+@[^\\s<>@",]+\\.[^\\s<>@",]+';
const FROM = new RegExp(`^(?:[^<>]*<${ADDRESS}>|${ADDRESS})$`);

/**
 * SMTP_URL, MAIL_FROM, MAIL_SINK_PORT, MAIL_SINK_DIR, ORG_*, RECEIPT_PREFIX and
 * RECEIPT_TOKEN_SECRETS. Outside production everything has a default that goes to the local
 * sink; production must say where mail goes, who sends it and which organization issues
 * receipts (a tax receipt in a stand-in's name is worse than none).
 */
export function readMail(
  reader: EnvReader,
  problems: string[],
  production: boolean,
  dataDir: string,
): MailConfig {
  const sinkPort = reader.port('MAIL_SINK_PORT', 2525);
  const smtpUrl = reader.string(
    'SMTP_URL',
    production ? undefined : `smtp://127.0.0.1:${sinkPort}`,
  );
  if (smtpUrl !== undefined && !/^smtps?:$/.test(protocolOf(smtpUrl))) {
    problems.push('SMTP_URL must be an smtp:// or smtps:// URL');
  }
  const from = reader.string('MAIL_FROM', production ? undefined : DEV_MAIL_FROM);
  if (from !== undefined && !FROM.test(from)) {
    problems.push(`MAIL_FROM must be "Name <address>" or an address, got "${from}"`);
  }
  const orgDefault = (value: string) => (production ? undefined : value);
  const timeZone = reader.string('ORG_TIME_ZONE', 'Asia/Jakarta');
  if (!isTimeZone(timeZone)) {
    problems.push(`ORG_TIME_ZONE must be an IANA time zone (e.g. Asia/Jakarta), got "${timeZone}"`);
  }
  const receiptPrefix = reader.string('RECEIPT_PREFIX', 'GLG');
  if (!/^[A-Z0-9]{2,8}$/.test(receiptPrefix)) {
    problems.push(`RECEIPT_PREFIX must be 2 to 8 of A-Z 0-9, got "${receiptPrefix}"`);
  }
  return {
    smtpUrl: smtpUrl ?? '',
    from: from ?? '',
    sinkPort,
    sinkDir: path.resolve(reader.string('MAIL_SINK_DIR', path.join(dataDir, 'mail'))),
    organization: {
      name: reader.string('ORG_NAME', orgDefault(DEV_ORGANIZATION.name)) ?? '',
      address: reader.string('ORG_ADDRESS', orgDefault(DEV_ORGANIZATION.address)) ?? '',
      taxId: reader.string('ORG_TAX_ID', orgDefault(DEV_ORGANIZATION.taxId)) ?? '',
      timeZone,
      receiptPrefix,
    },
    receiptTokenSecrets: reader.keyList(
      'RECEIPT_TOKEN_SECRETS',
      production ? undefined : DEV_RECEIPT_TOKEN_SECRETS,
    ),
    receiptsIntervalSeconds: reader.integer('RECEIPTS_INTERVAL_SECONDS', 5, 0, 86_400),
  };
}

/** The loopback host SMTP_URL names when it is the development sink's port; else undefined. */
export function sinkHostOf(mail: MailConfig): string | undefined {
  let url: URL;
  try {
    url = new URL(mail.smtpUrl);
  } catch {
    return undefined;
  }
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  const loopback = host === 'localhost' || host === '::1' || /^127\.\d+\.\d+\.\d+$/.test(host);
  const port = url.port === '' ? 25 : Number(url.port);
  return url.protocol === 'smtp:' && loopback && port === mail.sinkPort ? host : undefined;
}

function protocolOf(value: string): string {
  try {
    return new URL(value).protocol;
  } catch {
    return '';
  }
}
