import { execFile } from 'node:child_process';

/**
 * pdf-parse's text of the PDF, read in a plain Node child: pdf.js loads its worker with a dynamic
 * import(), which Jest's module sandbox refuses ("invoked without --experimental-vm-modules").
 */
const EXTRACT = `
const { PDFParse } = require(process.argv[1]);
const chunks = [];
process.stdin.on('data', (c) => chunks.push(c)).on('end', async () => {
  const parser = new PDFParse({ data: new Uint8Array(Buffer.concat(chunks)) });
  try { process.stdout.write((await parser.getText()).text); } finally { await parser.destroy(); }
});`;

/** The page text as pdf.js extracts it, with no-break spaces (Intl's "Rp 26.000") made plain. */
export function textOf(pdf: Buffer): Promise<string> {
  return new Promise((resolve, reject) => {
    const args = ['-e', EXTRACT, require.resolve('pdf-parse')];
    const child = execFile(process.execPath, args, { encoding: 'utf8' }, (error, out, err) => {
      if (error) reject(new Error(`pdf-parse failed: ${err}`, { cause: error }));
      else resolve(out.replace(/\u00a0/g, ' '));
    });
    child.stdin?.end(pdf);
  });
}
