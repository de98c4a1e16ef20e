import PDFDocument from 'pdfkit';
import type { ReceiptDocument } from './receipt-document';
import type { ReceiptFonts, Weight } from './receipt-fonts';
import {
  assertValidReceiptDocument,
  formatReceiptAmount,
  formatReceiptDate,
} from './receipt-document';

/*
 * Each value is drawn in the first font that covers all of it (ReceiptFonts: DejaVu Sans, then
 * Noto Sans SC, then KR), so Latin, Cyrillic, Greek, Arabic, Hebrew, Chinese, Japanese and Korean
 * names print as written; pdfkit embeds only the glyphs used (a subset tagged from the font's id,
 * not at random). Right-to-left: a wholly Arabic or Hebrew value prints right to left (see
 * ONE_RUN), but neither pdfkit nor this module has a bidi algorithm, so a value mixing RTL and LTR
 * words is laid out in the direction of its first strong script. Each value is therefore drawn on
 * its own, never glued to a label.
 */

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

/** What a document reverses: a credit note a receipt; a give-back's receipt a credit note. */
const REVERSED = {
  receipt: { en: 'credit note', id: 'nota kredit' },
  'credit-note': { en: 'receipt', id: 'kuitansi' },
} as const;

/** How a value is set: the font's weight (the face follows the text), size and colour. */
interface Style {
  readonly weight: Weight;
  readonly size: number;
  readonly color: string;
}

const HEADING: Style = { weight: 'bold', size: 16, color: 'black' };
const TITLE: Style = { weight: 'bold', size: 22, color: 'black' };
const SUBTITLE: Style = { weight: 'regular', size: 12, color: MUTED };
const NOTICE: Style = { weight: 'bold', size: 11, color: 'black' };
const VALUE: Style = { weight: 'bold', size: 11, color: 'black' };
const SMALL: Style = { weight: 'regular', size: 9, color: MUTED };
const LINK_TEXT: Style = { weight: 'regular', size: 9, color: LINK };

/** A PDF and the fonts its values are drawn in; every line goes through `write`. */
class Pen {
  constructor(
    readonly pdf: PDFKit.PDFDocument,
    private readonly fonts: ReceiptFonts,
  ) {}

  get width(): number {
    return this.pdf.page.width - 2 * MARGIN;
  }

  /**
   * Makes the font for `text` current, by its file's name: pdfkit takes the font parsed once
   * per process (its types list only files and bytes) and reuses it within the document.
   */
  select(text: string, weight: Weight): PDFKit.PDFDocument {
    const { file, font } = this.fonts.fontFor(text, weight);
    this.pdf.registerFont(file, font as unknown as PDFKit.Mixins.PDFFontSource);
    return this.pdf.font(file);
  }

  write(
    text: string,
    style: Style,
    options: PDFKit.Mixins.TextOptions = {},
    at?: [number, number],
  ): void {
    const { pdf } = this;
    this.select(text, style.weight).fontSize(style.size).fillColor(style.color);
    const layout = { ...ONE_RUN, width: this.width, ...options };
    if (at === undefined) pdf.text(text, layout);
    else pdf.text(text, at[0], at[1], layout);
  }
}

/**
 * Renders a receipt or credit note as an A4 PDF. The same document gives the same bytes:
 * CreationDate and ModDate are issuedAt (pdfkit would stamp the wall clock), and the trailer /ID,
 * which pdfkit computes as an MD5 over the info dictionary, is thereby fixed by the info alone,
 * whose Title carries the number; so two documents differ in /ID when their numbers do. The
 * bytes also depend on pdfkit, fontkit, the fonts, zlib and ICU versions, so pin them to keep old
 * receipts re-renderable byte for byte.
 */
export async function renderReceiptPdf(doc: ReceiptDocument, fonts: ReceiptFonts): Promise<Buffer> {
  assertValidReceiptDocument(doc);
  const title = TITLES[doc.kind];
  const pdf = new PDFDocument({
    size: 'A4',
    margin: MARGIN,
    // None of pdfkit's (Helvetica) nor a file it would parse again: the pen selects DejaVu.
    font: '',
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
  const pen = new Pen(pdf, fonts);
  pen.select('', 'regular');
  drawHeader(pen, doc);
  drawTitle(pen, doc, title);
  drawDetails(pen, doc);
  drawVerification(pen, doc.verificationUrl);
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

function drawHeader(pen: Pen, doc: ReceiptDocument): void {
  pen.write(doc.organization.name, HEADING);
  pen.write(doc.organization.address, SMALL);
  pen.write(`Tax ID / NPWP: ${doc.organization.taxId}`, SMALL);
  const { pdf } = pen;
  pdf.moveDown(0.5);
  const y = pdf.y;
  pdf
    .moveTo(MARGIN, y)
    .lineTo(MARGIN + pen.width, y)
    .lineWidth(0.5)
    .strokeColor('#999999')
    .stroke();
  pdf.moveDown(1);
}

function drawTitle(pen: Pen, doc: ReceiptDocument, title: { en: string; id: string }): void {
  pen.write(title.en, TITLE, {}, [MARGIN, pen.pdf.y]);
  pen.write(title.id, SUBTITLE);
  if (doc.refersTo !== undefined) {
    const reversed = REVERSED[doc.kind];
    pen.pdf.moveDown(0.4);
    pen.write(`Reverses ${reversed.en} ${doc.refersTo}`, NOTICE);
    pen.write(`Membatalkan ${reversed.id} ${doc.refersTo}`, SMALL);
  }
  pen.pdf.moveDown(1.2);
}

function drawDetails(pen: Pen, doc: ReceiptDocument): void {
  const rows: [string, string][] = [
    ['Number / Nomor', doc.number],
    ['Campaign / Kampanye', doc.campaignTitle],
    ['Donor / Donatur', doc.donorName],
    ['Amount / Jumlah', formatReceiptAmount(doc.amount, doc.currency, doc.locale)],
    ['Date / Tanggal', formatReceiptDate(doc.issuedAt, doc.timeZone, doc.locale)],
    ['Payment method / Metode', doc.paymentMethod],
  ];
  for (const [label, value] of rows) drawRow(pen, label, value);
}

/** A label and its value side by side; the next row starts below whichever wrapped further. */
function drawRow(pen: Pen, label: string, value: string): void {
  const { pdf } = pen;
  const top = pdf.y;
  pen.write(label, SMALL, { width: LABEL_WIDTH }, [MARGIN, top + 1.5]);
  const labelBottom = pdf.y;
  pen.write(value, VALUE, { width: pdf.page.width - MARGIN - VALUE_X }, [VALUE_X, top]);
  pdf.x = MARGIN;
  pdf.y = Math.max(labelBottom, pdf.y) + 6;
}

function drawVerification(pen: Pen, url: string): void {
  pen.pdf.moveDown(1.5);
  pen.write('Verify this document at / Verifikasi dokumen ini di:', SMALL, {}, [MARGIN, pen.pdf.y]);
  pen.write(url, LINK_TEXT, { link: url, underline: true });
  pen.pdf.fillColor('black');
}
