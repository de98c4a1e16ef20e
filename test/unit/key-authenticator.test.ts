import {
  bearerToken,
  constantTimeEquals,
  createKeyAuthenticator,
} from '../../src/auth/key-authenticator';

describe('bearer key authentication', () => {
  it('compares secrets exactly: same length or not, prefix or not', () => {
    expect(constantTimeEquals('s3cret-key', 's3cret-key')).toBe(true);
    expect(constantTimeEquals('s3cret-kez', 's3cret-key')).toBe(false);
    expect(constantTimeEquals('s3cret', 's3cret-key')).toBe(false);
    expect(constantTimeEquals('s3cret-key-and-more', 's3cret-key')).toBe(false);
    // A repetition of the secret's start matches every compared character but not the length.
    expect(constantTimeEquals('ab', 'abab')).toBe(false);
    expect(constantTimeEquals('', 'abab')).toBe(false);
  });

  it('maps each configured secret to its owner and nothing else to anyone', () => {
    const authenticate = createKeyAuthenticator(
      new Map([
        ['client-a', 'secret-of-a-0001'],
        ['client-b', 'secret-of-b-0002'],
      ]),
    );
    expect(authenticate('secret-of-a-0001')).toBe('client-a');
    expect(authenticate('secret-of-b-0002')).toBe('client-b');
    expect(authenticate('secret-of-a-0002')).toBeUndefined();
    expect(authenticate('secret-of-a-000')).toBeUndefined();
  });

  it('reads the token of a Bearer header only', () => {
    expect(bearerToken('Bearer abc')).toBe('abc');
    expect(bearerToken('bearer   abc')).toBe('abc');
    expect(bearerToken('Basic abc')).toBeUndefined();
    expect(bearerToken('Bearer a b')).toBeUndefined();
    expect(bearerToken(undefined)).toBeUndefined();
  });
});
