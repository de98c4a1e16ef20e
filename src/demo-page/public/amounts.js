// Money as the page shows and reads it: minor units, exactly, never through floats.

export /** Minor units as an exact decimal string (Intl.NumberFormat formats strings without floats). */
function decimal(minor, exponent) {
  if (exponent === 0) return String(minor);
  const digits = String(minor).padStart(exponent + 1, '0');
  return `${digits.slice(0, -exponent)}.${digits.slice(-exponent)}`;
}

/** What a donor typed ("75.000", "7,50") in minor units, exactly; undefined if it is not one. */
export function toMinor(text, exponent) {
  const plain = text.replace(/\s/g, '');
  if (exponent === 0) {
    // Rupiah are written with dots between thousands and have no decimals.
    return /^\d{1,3}(\.\d{3})*$|^\d+$/.test(plain) ? Number(plain.replace(/\./g, '')) : undefined;
  }
  const match = new RegExp(`^(\\d+)(?:[.,](\\d{1,${exponent}}))?$`).exec(plain);
  if (!match) return undefined;
  return Number(match[1] + (match[2] ?? '').padEnd(exponent, '0'));
}
