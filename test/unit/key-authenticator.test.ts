import { bearerToken, keyDigest, ownersByKeyDigest } from '../../src/auth/key-authenticator';

describe('bearer key authentication', () => {
  it('maps each configured secret to its owner and nothing else to anyone', () => {
    const owners = ownersByKeyDigest(
      new Map([
        ['client-a', 'secret-of-a-0001'],
        ['client-b', 'secret-of-b-0002'],
      ]),
    );
    const authenticate = (secret: string) => owners.get(keyDigest(secret));
    expect(authenticate('secret-of-a-0001')).toBe('client-a');
    expect(authenticate('secret-of-b-0002')).toBe('client-b');
    expect(authenticate('secret-of-a-0002')).toBeUndefined();
    expect(authenticate('secret-of-a-000')).toBeUndefined();
    expect(authenticate('secret-of-a-0001-and-more')).toBeUndefined();
    expect(authenticate('')).toBeUndefined();
    // Ids are not secrets: an owner's id never authenticates as its owner.
    expect(authenticate('client-a')).toBeUndefined();
    // Only digests are kept, never the secrets themselves.
    expect([...owners.keys()]).not.toContain('secret-of-a-0001');
  });

  it('reads the token of a Bearer header only', () => {
    expect(bearerToken('Bearer abc')).toBe('abc');
    expect(bearerToken('bearer   abc')).toBe('abc');
    expect(bearerToken('Basic abc')).toBeUndefined();
    expect(bearerToken('Bearer a b')).toBeUndefined();
    expect(bearerToken(undefined)).toBeUndefined();
  });
});
