import { openSync } from 'fontkit';
import type { Font } from 'fontkit';

/** One typeface's two weights, as paths pdfkit embeds from (it subsets to the glyphs used). */
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

/**
 * Picks, for each value drawn on a receipt, the first face that has a glyph for every character
 * of it, so a name prints whole in one font rather than in boxes. The coverage tables are read
 * once per process, and only for a value DejaVu cannot draw (the Noto files are 6–10 MB).
 */
export class ReceiptFonts {
  private readonly coverage = new Map<string, Font>();

  /** The font file to draw `text` in; DejaVu when no face covers all of it. */
  fontFor(text: string, weight: Weight): string {
    const codePoints: number[] = [];
    for (const char of text) {
      const codePoint = char.codePointAt(0) ?? 0;
      if (codePoint > 0x20) codePoints.push(codePoint);
    }
    const face =
      FACES.find((candidate) => {
        const font = this.font(candidate);
        return codePoints.every((c) => font.hasGlyphForCodePoint(c));
      }) ?? DEJAVU;
    return face[weight];
  }

  private font(face: Face): Font {
    let font = this.coverage.get(face.regular);
    if (font === undefined) {
      font = openSync(face.regular) as Font;
      this.coverage.set(face.regular, font);
    }
    return font;
  }
}
