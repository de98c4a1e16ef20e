import { canonicalJson, fingerprint } from '../../src/idempotency/fingerprint';

describe('request fingerprint', () => {
  it('ignores key order and whitespace', () => {
    const a = JSON.parse('{"b": 1, "a": {"y": [1, 2], "x": "s"}}') as unknown;
    const b = JSON.parse('{"a":{"x":"s","y":[1,2]},"b":1}') as unknown;
    expect(fingerprint(a)).toBe(fingerprint(b));
  });

  it('treats number spellings of one value alike', () => {
    const forms = ['1000', '1e3', '1000.0', '1.0E+3'].map(
      (n) => JSON.parse(`{"n":${n}}`) as unknown,
    );
    expect(new Set(forms.map(fingerprint)).size).toBe(1);
    expect(canonicalJson(-0)).toBe('0');
  });

  it('normalizes Unicode strings to NFC', () => {
    expect(fingerprint({ name: 'Andre\u0301' })).toBe(fingerprint({ name: 'Andr\u00e9' }));
  });

  it('tells different requests apart', () => {
    expect(fingerprint({ amount: 1 })).not.toBe(fingerprint({ amount: 2 }));
    expect(fingerprint({ a: [1, 2] })).not.toBe(fingerprint({ a: [2, 1] }));
    expect(fingerprint({ a: '1' })).not.toBe(fingerprint({ a: 1 }));
    expect(fingerprint({ a: null })).not.toBe(fingerprint({}));
  });
});
