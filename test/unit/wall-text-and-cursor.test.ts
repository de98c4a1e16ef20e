import { AppError } from '../../src/errors/error-catalogue';
import { decodeWallCursor, encodeWallCursor } from '../../src/campaigns/wall-cursor';
import { LINK_REMOVED, withoutLinks } from '../../src/campaigns/wall-text';

describe("the wall's text", () => {
  it.each([
    ['see https://spam.example/x?a=b now', `see ${LINK_REMOVED} now`],
    ['www.promo.id and bit.ly/abc', `${LINK_REMOVED} and ${LINK_REMOVED}`],
    ['cheap at spam.xyz!', `cheap at ${LINK_REMOVED}!`],
    ['//evil.com/x', LINK_REMOVED],
    ['write ani@example.com', `write ${LINK_REMOVED}`],
    ['ping 10.0.0.1/admin', `ping ${LINK_REMOVED}`],
  ])('removes the links of %j', (text, shown) => {
    expect(withoutLinks(text)).toBe(shown);
  });

  it.each(['Semangat! Semoga cepat pulih.', 'e.g. this', 'Mr.Smith', 'baris satu\nbaris dua'])(
    'leaves %j as it is',
    (text) => {
      expect(withoutLinks(text)).toBe(text);
    },
  );
});

describe("the wall's cursor", () => {
  it('round-trips microseconds and the id', () => {
    const cursor = {
      confirmedAtMicros: 1_796_000_000_123_456,
      id: '0b7f5a9e-7d2c-4c1e-9a3b-2f8e6d4c1a00',
    };
    const text = encodeWallCursor(cursor);
    expect(text).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(decodeWallCursor(text)).toEqual(cursor);
  });

  it.each([
    'bm90LWEtY3Vyc29y',
    Buffer.from('[1.5,"0b7f5a9e-7d2c-4c1e-9a3b-2f8e6d4c1a00"]').toString('base64url'),
    Buffer.from('[1,"x\' OR 1=1"]').toString('base64url'),
    Buffer.from('{"a":1}').toString('base64url'),
  ])('refuses %j as a 400', (text) => {
    const thrown = (() => {
      try {
        decodeWallCursor(text);
        return undefined;
      } catch (error) {
        return error;
      }
    })();
    expect(thrown).toBeInstanceOf(AppError);
    expect((thrown as AppError).code).toBe('validation-failed');
  });
});
