import { textOf } from '../support/pdf-text';
import type { ReceiptDocument } from '../../src/receipts/receipt-document';
import { formatReceiptAmount, formatReceiptDate } from '../../src/receipts/receipt-document';
import { ReceiptFonts } from '../../src/receipts/receipt-fonts';
import { renderReceiptPdf as renderWith } from '../../src/receipts/receipt-pdf';

const fonts = new ReceiptFonts();
const renderReceiptPdf = (doc: ReceiptDocument) => renderWith(doc, fonts);

const receipt: ReceiptDocument = {
  kind: 'receipt',
  number: 'R-2026-000017',
  organization: {
    name: 'Yayasan Galang Peduli',
    address: 'Jl. Merdeka No. 1, Jakarta 10110',
    taxId: '01.234.567.8-901.000',
  },
  campaignTitle: 'Banjir Demak 2026',
  donorName: 'Siti Rahayu',
  amount: 26000,
  currency: 'IDR',
  locale: 'id-ID',
  issuedAt: new Date('2026-12-04T18:00:00Z'),
  timeZone: 'Asia/Jakarta',
  paymentMethod: 'QRIS',
  verificationUrl: 'https://galang.example/r/R-2026-000017',
};

const creditNote: ReceiptDocument = {
  ...receipt,
  kind: 'credit-note',
  number: 'CN-2026-000042',
  refersTo: 'R-2026-000017',
  verificationUrl: 'https://galang.example/r/CN-2026-000042',
};

function trailerId(pdf: Buffer): string | undefined {
  return /\/ID \[<([0-9a-f]+)>/.exec(pdf.toString('latin1'))?.[1];
}

describe('receipt amount and date', () => {
  it('prints rupiah without a fraction and cents with two digits', () => {
    expect(formatReceiptAmount(26000, 'IDR', 'id-ID')).toBe('Rp\u00a026.000');
    expect(formatReceiptAmount(500, 'USD', 'en-US')).toBe('$5.00');
    expect(formatReceiptAmount(123456, 'EUR', 'de-DE')).toBe('1.234,56\u00a0€');
    expect(() => formatReceiptAmount(1.5, 'IDR', 'id-ID')).toThrow(RangeError);
  });

  it('shows the date in the given zone, not the server one', () => {
    // 18:00 UTC on 4 December is already 5 December in Jakarta (UTC+7).
    expect(formatReceiptDate(receipt.issuedAt, 'Asia/Jakarta', 'id-ID')).toBe(
      '5 Desember 2026 pukul 01.00 WIB',
    );
  });
});

describe('renderReceiptPdf', () => {
  it('gives the same bytes for the same document', async () => {
    const first = await renderReceiptPdf(receipt);
    const second = await renderReceiptPdf({ ...receipt, issuedAt: new Date(receipt.issuedAt) });
    expect(first.subarray(0, 5).toString('latin1')).toBe('%PDF-');
    expect(first.equals(second)).toBe(true);
    // CreationDate and ModDate are issuedAt, not the wall clock.
    expect(first.toString('latin1').match(/\(D:20261204180000Z\)/g)).toHaveLength(2);
  });

  it('gives the same bytes from fonts that drew other documents as from fresh ones', async () => {
    // The parsed fonts are shared by every document of a process: none may carry state over.
    const others = [
      { ...creditNote, donorName: '王小明' },
      { ...receipt, number: 'R-2026-000020', donorName: '김민준' },
      { ...receipt, number: 'R-2026-000021', donorName: 'محمد علي' },
    ];
    for (const other of others) await renderReceiptPdf(other);
    const afterOthers = await renderReceiptPdf({ ...receipt, donorName: 'Siti 王小明' });
    const fresh = await renderWith({ ...receipt, donorName: 'Siti 王小明' }, new ReceiptFonts());
    expect(afterOthers.equals(fresh)).toBe(true);
  });

  it('gives different bytes and /ID for a different number', async () => {
    const first = await renderReceiptPdf(receipt);
    const other = await renderReceiptPdf({ ...receipt, number: 'R-2026-000018' });
    expect(first.equals(other)).toBe(false);
    expect(trailerId(first)).toMatch(/^[0-9a-f]{32}$/);
    expect(trailerId(other)).not.toBe(trailerId(first));
  });

  it('prints the number, the amount, the date and the verification link', async () => {
    const pdf = await renderReceiptPdf(receipt);
    const text = await textOf(pdf);
    expect(text).toContain('Receipt');
    expect(text).toContain('Kuitansi');
    expect(text).toContain('R-2026-000017');
    expect(text).toContain('Rp 26.000');
    expect(text).toContain('5 Desember 2026 pukul 01.00 WIB');
    expect(text).toContain('Siti Rahayu');
    expect(text).toContain('01.234.567.8-901.000');
    expect(text).toContain('https://galang.example/r/R-2026-000017');
    expect(pdf.toString('latin1')).toContain('/URI (https://galang.example/r/R-2026-000017)');
    expect(text).not.toContain('Reverses');
  });

  it.each([
    ['Cyrillic', 'Анна Кузнецова'],
    ['Greek', 'Γιώργος Παπαδόπουλος'],
    ['Hebrew', 'שרה כהן'],
    // Several words: shaped word by word, they came out in left-to-right order.
    ['Arabic', 'محمد عبد الله'],
    // DejaVu has no glyph for these: they printed as empty boxes.
    ['Chinese', '李小龙'],
    ['Japanese', '山田 はなこ'],
    ['Korean', '김민준'],
    ['Latin and Chinese', 'Wei 王伟'],
  ])('prints a %s donor name as written', async (_script, donorName) => {
    const text = await textOf(await renderReceiptPdf({ ...receipt, donorName }));
    expect(text).toContain(donorName);
  });

  it('names the receipt a credit note reverses', async () => {
    const text = await textOf(await renderReceiptPdf(creditNote));
    expect(text).toContain('Credit note');
    expect(text).toContain('Nota kredit');
    expect(text).toContain('CN-2026-000042');
    expect(text).toContain('Reverses receipt R-2026-000017');
  });

  it('names the credit note that a give-back receipt reverses', async () => {
    const giveBack = { ...receipt, number: 'R-2026-000043', refersTo: 'CN-2026-000042' };
    const text = await textOf(await renderReceiptPdf(giveBack));
    expect(text).toContain('Receipt');
    expect(text).toContain('Reverses credit note CN-2026-000042');
    expect(text).toContain('Membatalkan nota kredit CN-2026-000042');
  });

  it('refuses a credit note that reverses nothing and a blank reference', async () => {
    await expect(renderReceiptPdf({ ...creditNote, refersTo: undefined })).rejects.toThrow(
      /must name the receipt/,
    );
    await expect(renderReceiptPdf({ ...receipt, refersTo: ' ' })).rejects.toThrow(
      /must name a document/,
    );
  });
});
