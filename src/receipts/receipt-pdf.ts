import PDFDocument from 'pdfkit';
import type { ReceiptDocument } from './receipt-document';
import {
  assertValidReceiptDocument,
  formatReceiptAmount,
  formatReceiptDate,
} from './receipt-document';

/**
 * DejaVu Sans covers Latin, Cyrillic, Greek, Arabic and Hebrew, so donor names in those scripts
 * print as written; pdfkit embeds only the glyphs used (a subset tagged from the font's id, F1/F2,
 * not at random). Not covered yet: CJK. No installed package ships a CJK font (node_modules holds
 * only DejaVu, pdfjs-dist's Latin standard fonts and playwright's icon font), so a Chinese,
 * Japanese or Korean name prints as empty boxes. The fix is a CJK-capable font such as Noto Sans
 * CJK or Source Han Sans added as a dependency and used for the runs DejaVu lacks glyphs for.
 * Right-to-left: a wholly Arabic or Hebrew value prints right to left (see ONE_RUN), but neither
 * pdfkit nor this module has a bidi algorithm, so a value mixing RTL and LTR words is laid out in
 * the direction of its first strong script. Each value is therefore drawn on its own, never glued
 * to a label.
 */
const FONT_REGULAR = require.resolve('dejavu-fonts-ttf/ttf/DejaVuSans.ttf');
const FONT_BOLD = require.resolve('dejavu-fonts-ttf/ttf/DejaVuSans-Bold.ttf');

const MARGIN = 56;
const LABEL_WIDTH = 150;
const VALUE_X = MARGIN + LABEL_WIDTH + 10;
const MUTED = '#555555';
const LINK = '#1a4fa0';

/**
 * Lays each line out as one fontkit run. Without features pdfkit shapes word by word, so an
 * Arabic or Hebrew name came out with its words in left-to-right order and the spaces moved; as
 * one run fontkit reverses the whole line, which is right for a wholly right-to-left value. The
 * empty list keeps fontkit's default features (Arabic joining forms, ligatures, kerning).
 */
const ONE_RUN: PDFKit.Mixins.TextOptions = { features: [] };

/** The English title and, beneath it, the Indonesian one, for donors and offices in Indonesia. */
const TITLES = {
  receipt: { en: 'Receipt', id: 'Kuitansi' },
  'credit-note': { en: 'Credit note', id: 'Nota kredit' },
} as const;

/**
 * Renders a receipt or credit note as an A4 PDF. The same document gives the same bytes:
 * CreationDate and ModDate are issuedAt (pdfkit would stamp the wall clock), and the trailer /ID,
 * which pdfkit computes as an MD5 over the info dictionary, is thereby fixed by the info alone,
 * whose Title carries the number; so two documents differ in /ID when their numbers do. The
 * bytes also depend on pdfkit, fontkit, zlib and ICU versions, so pin them to keep old receipts
 * re-renderable byte for byte.
 */
export async function renderReceiptPdf(doc: ReceiptDocument): Promise<Buffer> {
  assertValidReceiptDocument(doc);
  const title = TITLES[doc.kind];
  const pdf = new PDFDocument({
    size: 'A4',
    margin: MARGIN,
    font: FONT_REGULAR,
    lang: doc.locale,
    displayTitle: true,
    info: {
      Title: `${title.en} ${doc.number}`,
      Author: doc.organization.name,
      Subject: `${title.en} for a donation to ${doc.campaignTitle}`,
      Creator: 'galang',
      Producer: 'galang (PDFKit)',
      CreationDate: doc.issuedAt,
      ModDate: doc.issuedAt,
    },
  });
  const done = collect(pdf);
  drawHeader(pdf, doc);
  drawTitle(pdf, doc, title);
  drawDetails(pdf, doc);
  drawVerification(pdf, doc.verificationUrl);
  pdf.end();
  return done;
}

function collect(pdf: PDFKit.PDFDocument): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    pdf.on('data', (chunk: Buffer) => chunks.push(chunk));
    pdf.on('end', () => {
      resolve(Buffer.concat(chunks));
    });
    pdf.on('error', reject);
  });
}

function contentWidth(pdf: PDFKit.PDFDocument): number {
  return pdf.page.width - 2 * MARGIN;
}

function drawHeader(pdf: PDFKit.PDFDocument, doc: ReceiptDocument): void {
  const width = contentWidth(pdf);
  pdf
    .font(FONT_BOLD)
    .fontSize(16)
    .fillColor('black')
    .text(doc.organization.name, { ...ONE_RUN, width });
  pdf.font(FONT_REGULAR).fontSize(9).fillColor(MUTED);
  pdf.text(doc.organization.address, { ...ONE_RUN, width });
  pdf.text(`Tax ID / NPWP: ${doc.organization.taxId}`, { ...ONE_RUN, width });
  pdf.moveDown(0.5);
  const y = pdf.y;
  pdf
    .moveTo(MARGIN, y)
    .lineTo(MARGIN + width, y)
    .lineWidth(0.5)
    .strokeColor('#999999')
    .stroke();
  pdf.moveDown(1);
}

function drawTitle(
  pdf: PDFKit.PDFDocument,
  doc: ReceiptDocument,
  title: { en: string; id: string },
): void {
  const width = contentWidth(pdf);
  pdf
    .font(FONT_BOLD)
    .fontSize(22)
    .fillColor('black')
    .text(title.en, MARGIN, pdf.y, { ...ONE_RUN, width });
  pdf
    .font(FONT_REGULAR)
    .fontSize(12)
    .fillColor(MUTED)
    .text(title.id, { ...ONE_RUN, width });
  if (doc.kind === 'credit-note' && doc.refersTo !== undefined) {
    pdf.moveDown(0.4);
    pdf.font(FONT_BOLD).fontSize(11).fillColor('black');
    pdf.text(`Reverses receipt ${doc.refersTo}`, { ...ONE_RUN, width });
    pdf.font(FONT_REGULAR).fontSize(9).fillColor(MUTED);
    pdf.text(`Membatalkan kuitansi ${doc.refersTo}`, { ...ONE_RUN, width });
  }
  pdf.moveDown(1.2);
}

function drawDetails(pdf: PDFKit.PDFDocument, doc: ReceiptDocument): void {
  const rows: [string, string][] = [
    ['Number / Nomor', doc.number],
    ['Campaign / Kampanye', doc.campaignTitle],
    ['Donor / Donatur', doc.donorName],
    ['Amount / Jumlah', formatReceiptAmount(doc.amount, doc.currency, doc.locale)],
    ['Date / Tanggal', formatReceiptDate(doc.issuedAt, doc.timeZone, doc.locale)],
    ['Payment method / Metode', doc.paymentMethod],
  ];
  for (const [label, value] of rows) drawRow(pdf, label, value);
}

/** A label and its value side by side; the next row starts below whichever wrapped further. */
function drawRow(pdf: PDFKit.PDFDocument, label: string, value: string): void {
  const top = pdf.y;
  const valueWidth = pdf.page.width - MARGIN - VALUE_X;
  pdf.font(FONT_REGULAR).fontSize(9).fillColor(MUTED);
  pdf.text(label, MARGIN, top + 1.5, { ...ONE_RUN, width: LABEL_WIDTH });
  const labelBottom = pdf.y;
  pdf.font(FONT_BOLD).fontSize(11).fillColor('black');
  pdf.text(value, VALUE_X, top, { ...ONE_RUN, width: valueWidth });
  pdf.x = MARGIN;
  pdf.y = Math.max(labelBottom, pdf.y) + 6;
}

function drawVerification(pdf: PDFKit.PDFDocument, url: string): void {
  const width = contentWidth(pdf);
  pdf.moveDown(1.5);
  pdf.font(FONT_REGULAR).fontSize(9).fillColor(MUTED);
  pdf.text('Verify this document at / Verifikasi dokumen ini di:', MARGIN, pdf.y, {
    ...ONE_RUN,
    width,
  });
  pdf.fillColor(LINK).text(url, { ...ONE_RUN, width, link: url, underline: true });
  pdf.fillColor('black');
}
