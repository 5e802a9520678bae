import { createPublicKey } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TokenVerificationError, verifyToken, type VerifyTokenOptions } from '../src/index.js';
import { startGatehouse, type Gatehouse } from './helpers/gatehouse.js';
import { makeKey, signHmac, signWith, startIssuer, unsigned, type TestIssuer } from './helpers/issuer.js';

async function reasonOf(token: string, options: VerifyTokenOptions): Promise<string> {
  const error = await verifyToken(token, options).then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(error instanceof TokenVerificationError)) throw new Error(`expected a refusal, got ${String(error)}`);
  return error.reason;
}

const decode = (segment: string) => JSON.parse(Buffer.from(segment, 'base64url').toString());
const encode = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

describe('attacks on tokens of a running Gatehouse', () => {
  let gh: Gatehouse;
  let token: string;
  let options: VerifyTokenOptions;
  let header: Record<string, any>;
  let claims: Record<string, any>;
  let signature: string;
  beforeAll(async () => {
    gh = await startGatehouse();
    const user = await gh.signUp();
    token = user.accessToken;
    options = { issuer: gh.development.issuer };
    await verifyToken(token, options); // loads the keys
    const [h, p, s] = token.split('.') as [string, string, string];
    header = decode(h);
    claims = decode(p);
    signature = s;
  });
  afterAll(() => gh.close());

  it('alg "none" (any spelling) never verifies', async () => {
    for (const alg of ['none', 'None', 'NONE']) {
      const forged = unsigned({ ...claims, sub: 'user_victim' }, { kid: header.kid, alg });
      expect(await reasonOf(forged, options)).toBe('token-invalid');
    }
  });

  it('alg confusion: HS256 with the public key (PEM or JWK text) as the HMAC secret never verifies', async () => {
    const { keys } = await gh.jwks(gh.development);
    const jwk = keys.find((k) => k.kid === header.kid)!;
    const pem = createPublicKey({ key: jwk as any, format: 'jwk' })
      .export({ format: 'pem', type: 'spki' })
      .toString();
    for (const secret of [pem, JSON.stringify(jwk)]) {
      const forged = signHmac(secret, { ...claims, sub: 'user_victim' }, { kid: header.kid });
      expect(await reasonOf(forged, options)).toBe('token-invalid');
    }
  });

  it('a tampered payload is signature-invalid', async () => {
    const forged = `${token.split('.')[0]}.${encode({ ...claims, sub: 'user_victim' })}.${signature}`;
    expect(await reasonOf(forged, options)).toBe('signature-invalid');
    const promoted = `${token.split('.')[0]}.${encode({ ...claims, org_role: 'owner', org_permissions: ['org:manage'] })}.${signature}`;
    expect(await reasonOf(promoted, options)).toBe('signature-invalid');
  });

  it('a tampered header is signature-invalid', async () => {
    const forged = `${encode({ ...header, extra: 1 })}.${token.split('.')[1]}.${signature}`;
    expect(await reasonOf(forged, options)).toBe('signature-invalid');
  });

  it('a tampered signature is signature-invalid, including the same bytes spelled in a non-canonical encoding', async () => {
    const bytes = Buffer.from(signature, 'base64url');
    bytes[10] = bytes[10]! ^ 1;
    const flipped = `${token.slice(0, token.lastIndexOf('.'))}.${bytes.toString('base64url')}`;
    expect(await reasonOf(flipped, options)).toBe('signature-invalid');
    // RSA-2048: 342 characters, whose last one carries 4 unused bits; setting them changes the text, not the bytes.
    const last = signature.at(-1)!;
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    const sibling = alphabet[alphabet.indexOf(last) ^ 1]!;
    const respelled = `${token.slice(0, -1)}${sibling}`;
    expect(Buffer.from(respelled.split('.')[2]!, 'base64url').equals(Buffer.from(signature, 'base64url'))).toBe(true);
    expect(await reasonOf(respelled, options)).toBe('signature-invalid');
  });

  it('a token of another environment of the same server is issuer-invalid, and fetches nothing', async () => {
    const other = await gh.signUp(gh.production);
    const before = gh.requests.length;
    expect(await reasonOf(other.accessToken, options)).toBe('issuer-invalid');
    expect(gh.requests.length).toBe(before);
  });

  it('a flood of forged kids costs one JWKS fetch, then each is refused at once', async () => {
    const attacker = makeKey('RS256');
    const fetches = gh.jwksFetches(gh.development);
    const forged = () => signWith({ ...attacker, kid: `key_${Math.random().toString(36).slice(2)}` }, claims);
    const reasons = await Promise.all(Array.from({ length: 200 }, () => reasonOf(forged(), options)));
    expect(new Set(reasons)).toEqual(new Set(['jwk-kid-mismatch']));
    for (let i = 0; i < 50; i++) expect(await reasonOf(forged(), options)).toBe('jwk-kid-mismatch');
    expect(gh.jwksFetches(gh.development)).toBe(fetches + 1);
    // Real tokens keep verifying from the cache meanwhile.
    expect((await verifyToken(token, options)).sub).toBe(claims.sub);
  });
});

describe('attacks on claims and keys, with keys of the test’s own', () => {
  let issuer: TestIssuer;
  const rsa = makeKey('RS256', 'key_rsa');
  const ec = makeKey('ES256', 'key_ec');
  const ed = makeKey('EdDSA', 'key_ed');
  let options: VerifyTokenOptions;
  beforeAll(async () => {
    issuer = await startIssuer([rsa, ec, ed]);
    options = { issuer: issuer.issuer };
  });
  afterAll(() => issuer.close());

  it('typ must be at+jwt: an ID token or a plain JWT of the same key is refused', async () => {
    for (const typ of ['JWT', 'id_token+jwt', undefined]) {
      expect(await reasonOf(issuer.token({}, { typ }), options)).toBe('token-invalid');
    }
    expect((await verifyToken(issuer.token({}, { typ: 'application/at+jwt' }), options)).sub).toBe('user_test');
  });

  it('alg must be the key’s own: a token naming another algorithm than its key’s is refused', async () => {
    // Signed by the EC key, but the header points at the RSA key's kid with ES256.
    const confused = signWith({ ...ec, kid: rsa.kid }, issuer.claims());
    expect(await reasonOf(confused, options)).toBe('token-invalid');
    const relabelled = signWith(ed, issuer.claims(), { alg: 'ES256' });
    expect(await reasonOf(relabelled, options)).toBe('token-invalid');
  });

  it('a JWKS entry that is an HMAC key, or an RSA key labelled HS256, never verifies', async () => {
    const hmacIssuer = await startIssuer([]);
    try {
      const secret = 'shared-secret';
      hmacIssuer.keys.push(
        { ...rsa, kid: 'key_labelled', jwk: { ...rsa.jwk, kid: 'key_labelled', alg: 'HS256' } },
        { ...rsa, kid: 'key_oct', jwk: { kty: 'oct', k: Buffer.from(secret).toString('base64url'), kid: 'key_oct', alg: 'HS256' } },
      );
      const opts = { issuer: hmacIssuer.issuer };
      expect(await reasonOf(signHmac(secret, hmacIssuer.claims(), { kid: 'key_oct' }), opts)).toBe('token-invalid');
      expect(await reasonOf(signWith({ ...rsa, kid: 'key_labelled' }, hmacIssuer.claims()), opts)).toBe('jwk-kid-mismatch');
    } finally {
      await hmacIssuer.close();
    }
  });

  it('expired: refused once past exp plus the clock skew (default 5 s, or clockSkewInMs)', async () => {
    const now = Math.floor(Date.now() / 1000);
    const lately = issuer.token({ exp: now - 2 });
    expect((await verifyToken(lately, options)).sub).toBe('user_test');
    expect(await reasonOf(lately, { ...options, clockSkewInMs: 0 })).toBe('token-expired');
    expect(await reasonOf(issuer.token({ exp: now - 10 }), options)).toBe('token-expired');
    expect((await verifyToken(issuer.token({ exp: now - 10 }), { ...options, clockSkewInMs: 20_000 })).sub).toBe('user_test');
  });

  it('not yet valid: refused while nbf (or iat) is ahead by more than the skew', async () => {
    const now = Math.floor(Date.now() / 1000);
    const soon = issuer.token({ nbf: now + 2, iat: now });
    expect((await verifyToken(soon, options)).sub).toBe('user_test');
    expect(await reasonOf(soon, { ...options, clockSkewInMs: 0 })).toBe('token-not-active-yet');
    expect(await reasonOf(issuer.token({ nbf: now + 60, iat: now }), options)).toBe('token-not-active-yet');
    expect(await reasonOf(issuer.token({ iat: now + 60 }), options)).toBe('token-not-active-yet');
  });

  it('azp not in authorizedParties is refused; a listed one passes', async () => {
    const token = issuer.token({ azp: 'https://evil.example.test' });
    expect(await reasonOf(token, { ...options, authorizedParties: ['https://app.example.test'] })).toBe('authorized-party-invalid');
    const good = issuer.token({ azp: 'https://app.example.test' });
    expect((await verifyToken(good, { ...options, authorizedParties: ['https://app.example.test'] })).azp).toBe('https://app.example.test');
  });

  it('azp that is a substring of a string authorizedParties is not accepted: a string option is refused as a TypeError', async () => {
    const token = issuer.token({ azp: 'https://app.example' });
    const stringOption = { ...options, authorizedParties: 'https://app.example.test' as unknown as string[] };
    await expect(verifyToken(token, stringOption)).rejects.toThrow(TypeError);
    await expect(verifyToken(token, stringOption)).rejects.toThrow(/authorizedParties must be an array/);
  });

  it('a forged signature by another key with the same kid is signature-invalid', async () => {
    const impostor = makeKey('ES256', ec.kid);
    expect(await reasonOf(signWith(impostor, issuer.claims()), options)).toBe('signature-invalid');
  });

  it('garbage, oversized and structurally wrong tokens are token-invalid without a fetch', async () => {
    const fetches = issuer.fetches;
    for (const bad of ['', 'abc', 'a.b', 'a.b.c.d', `${'a'.repeat(20_000)}.b.c`, 'e30.e30.', '!!.e30.e30', 'W10.e30.e30']) {
      expect(await reasonOf(bad, options)).toBe('token-invalid');
    }
    expect(issuer.fetches).toBe(fetches);
  });

  it('a token missing sub, sid or exp is token-invalid even when properly signed', async () => {
    expect(await reasonOf(issuer.token({ sub: undefined }), options)).toBe('token-invalid');
    expect(await reasonOf(issuer.token({ sid: 42 }), options)).toBe('token-invalid');
    expect(await reasonOf(issuer.token({ exp: '9999999999' }), options)).toBe('token-invalid');
  });
});
