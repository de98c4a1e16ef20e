import { openSync } from 'fontkit';
import type { Font } from 'fontkit';

/** One typeface's two weights, as font files (pdfkit subsets each to the glyphs used). */
interface Face {
  readonly regular: string;
  readonly bold: string;
}

/**
 * In the order tried: DejaVu Sans for Latin, Cyrillic, Greek, Arabic and Hebrew; Noto Sans SC
 * for Chinese and Japanese (all 20,976 ideographs of the basic block, kana); Noto Sans KR for
 * Hangul, which SC lacks. The Noto packages are pinned exactly: a receipt's bytes depend on them.
 */
const DEJAVU: Face = {
  regular: require.resolve('dejavu-fonts-ttf/ttf/DejaVuSans.ttf'),
  bold: require.resolve('dejavu-fonts-ttf/ttf/DejaVuSans-Bold.ttf'),
};
const FACES: readonly Face[] = [
  DEJAVU,
  {
    regular:
      require.resolve('@expo-google-fonts/noto-sans-sc/400Regular/NotoSansSC_400Regular.ttf'),
    bold: require.resolve('@expo-google-fonts/noto-sans-sc/700Bold/NotoSansSC_700Bold.ttf'),
  },
  {
    regular:
      require.resolve('@expo-google-fonts/noto-sans-kr/400Regular/NotoSansKR_400Regular.ttf'),
    bold: require.resolve('@expo-google-fonts/noto-sans-kr/700Bold/NotoSansKR_700Bold.ttf'),
  },
];

export type Weight = keyof Face;

/** A parsed font and the file it came from (pdfkit's name for it within a document). */
export interface ReceiptFont {
  readonly file: string;
  readonly font: Font;
}

/**
 * Picks, for each value drawn on a receipt, the first face that has a glyph for every character
 * of it, so a name prints whole in one font rather than in boxes. Each file is parsed once per
 * process, and the Noto ones only for a value DejaVu cannot draw (they are 6–10 MB); pdfkit
 * takes the parsed font, where from a path it would parse the file again for every document
 * (most of a receipt's cost: docs/benchmarks.md).
 */
export class ReceiptFonts {
  private readonly parsed = new Map<string, Font>();

  /** The font to draw `text` in; DejaVu when no face covers all of it. */
  fontFor(text: string, weight: Weight): ReceiptFont {
    const codePoints: number[] = [];
    for (const char of text) {
      const codePoint = char.codePointAt(0) ?? 0;
      if (codePoint > 0x20) codePoints.push(codePoint);
    }
    const face =
      FACES.find((candidate) => {
        const font = this.parse(candidate.regular);
        return codePoints.every((c) => font.hasGlyphForCodePoint(c));
      }) ?? DEJAVU;
    return { file: face[weight], font: this.parse(face[weight]) };
  }

  private parse(file: string): Font {
    let font = this.parsed.get(file);
    if (font === undefined) {
      font = openSync(file) as Font;
      this.parsed.set(file, font);
    }
    return font;
  }
}
