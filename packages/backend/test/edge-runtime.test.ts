import { randomBytes } from 'node:crypto';
import { runInNewContext } from 'node:vm';
import { build } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type * as Backend from '../src/index.js';
import { isCanonicalBase64url } from '../src/runtime.js';
import { makeKey, signWith, startIssuer, unsigned, type TestIssuer } from './helpers/issuer.js';

/**
 * @gatehouse/backend on a runtime like the Edge runtime: the package bundled for a platform with no
 * node built-ins (esbuild refuses any `node:` import left in it) and run in a fresh V8 context that
 * has WebCrypto, fetch and the web globals, but no process, Buffer or require.
 */
/** `source` (relative to this file) bundled as an IIFE for a platform without node built-ins, exposed as `globalName`. */
async function bundleForEdge(source: string, globalName: string): Promise<string> {
  const bundle = await build({
    entryPoints: [new URL(source, import.meta.url).pathname],
    bundle: true,
    platform: 'neutral',
    format: 'iife',
    globalName,
    target: 'es2022',
    write: false,
    logLevel: 'silent',
  });
  return `${bundle.outputFiles[0]!.text}\nthis.${globalName} = ${globalName};`;
}

async function loadOnEdgeLikeRuntime(): Promise<typeof Backend> {
  const code = await bundleForEdge('../src/index.ts', 'gatehouseBackend');
  const globals = {
    crypto: globalThis.crypto,
    fetch: globalThis.fetch,
    Request,
    Response,
    Headers,
    AbortSignal,
    TextEncoder,
    TextDecoder,
    URL,
    atob,
    btoa,
    setTimeout,
    clearTimeout,
    console,
  };
  const context = { ...globals } as Record<string, unknown>;
  runInNewContext(code, context);
  expect(runInNewContext('typeof process + typeof Buffer + typeof require', context)).toBe('undefinedundefinedundefined');
  return context.gatehouseBackend as typeof Backend;
}

describe('verifyToken on an Edge-like runtime (no node:crypto, no Buffer, no process)', () => {
  let backend: typeof Backend;
  let issuer: TestIssuer;
  const rsa = makeKey('RS256', 'key_rsa');
  const ec = makeKey('ES256', 'key_ec');
  const ed = makeKey('EdDSA', 'key_ed');

  beforeAll(async () => {
    backend = await loadOnEdgeLikeRuntime();
    issuer = await startIssuer([rsa, ec, ed]);
  });
  afterAll(() => issuer.close());

  const reasonOf = (token: string, options: Backend.VerifyTokenOptions) =>
    backend.verifyToken(token, options).then(
      () => 'verified',
      (error: { name: string; reason: string }) => (error.name === 'TokenVerificationError' ? error.reason : String(error)),
    );

  it('single-flight: concurrent first verifications share one JWKS fetch; each algorithm verifies from the cache', async () => {
    const tokens = [rsa, ec, ed].map((key) => issuer.token({}, {}, key));
    const claims = await Promise.all(tokens.map((token) => backend.verifyToken(token, { issuer: issuer.issuer })));
    expect(claims.map((c) => c.sub)).toEqual(['user_test', 'user_test', 'user_test']);
    expect(issuer.fetches).toBe(1);
  });

  it('the same refusals: tampered, alg none, expired, another issuer, malformed', async () => {
    const options = { issuer: issuer.issuer };
    for (const key of [rsa, ec, ed]) {
      const [h, , s] = issuer.token({}, {}, key).split('.');
      const forged = `${h}.${Buffer.from(JSON.stringify(issuer.claims({ sub: 'user_victim' }))).toString('base64url')}.${s}`;
      expect(await reasonOf(forged, options)).toBe('signature-invalid');
    }
    expect(await reasonOf(unsigned(issuer.claims(), { kid: rsa.kid }), options)).toBe('token-invalid');
    expect(await reasonOf(issuer.token({ exp: Math.floor(Date.now() / 1000) - 60 }), options)).toBe('token-expired');
    expect(await reasonOf(issuer.token({ iss: 'https://elsewhere.example' }), options)).toBe('issuer-invalid');
    expect(await reasonOf('not.a.token', options)).toBe('token-invalid');
    expect(await reasonOf(`${issuer.token().slice(0, -2)}!!`, options)).toBe('signature-invalid');
  });

  it('kid cooldown: a flood of unknown kids costs one refetch, then each is refused at once', async () => {
    const attacker = makeKey('ES256');
    const before = issuer.fetches;
    const forged = () => signWith({ ...attacker, kid: `key_${Math.random().toString(36).slice(2)}` }, issuer.claims());
    const reasons = await Promise.all(Array.from({ length: 50 }, () => reasonOf(forged(), { issuer: issuer.issuer })));
    expect(new Set(reasons)).toEqual(new Set(['jwk-kid-mismatch']));
    expect(issuer.fetches).toBe(before + 1);
  });

  it('networkless jwtKey: a JWK or an SPKI PEM of each algorithm, no fetch', async () => {
    const before = issuer.fetches;
    for (const key of [rsa, ec, ed]) {
      const token = issuer.token({}, {}, key);
      expect((await backend.verifyToken(token, { issuer: issuer.issuer, jwtKey: key.jwk })).sub).toBe('user_test');
      expect((await backend.verifyToken(token, { issuer: issuer.issuer, jwtKey: key.pem })).sub).toBe('user_test');
    }
    expect(issuer.fetches).toBe(before);
  });

  it('authenticateRequest reads a fetch Request the same way', async () => {
    const request = new Request('https://app.example/api', { headers: { authorization: `Bearer ${issuer.token()}` } });
    const auth = await backend.authenticateRequest(request, { issuer: issuer.issuer });
    expect(auth.isSignedIn && auth.userId).toBe('user_test');
  });
});

describe('signature encodings', () => {
  it('non-canonical spellings: isCanonicalBase64url accepts exactly what re-encoding the decoded bytes gives back', () => {
    const roundTrips = (text: string) => Buffer.from(text, 'base64url').toString('base64url') === text;
    const spellings = [
      '',
      'A',
      'AA',
      'AB',
      'AAA',
      'AAB',
      'AAE',
      'AAAA',
      'a-_9',
      'AA==',
      'AA=',
      'A A',
      'AA.',
      'AA+/',
      'QQ',
      'QR',
      'QUI',
      'QUJ',
    ];
    for (let i = 0; i < 300; i++) {
      const encoded = randomBytes(i % 70).toString('base64url');
      spellings.push(encoded);
      if (encoded.length > 0) {
        const last = encoded.at(-1)!;
        spellings.push(encoded.slice(0, -1) + String.fromCharCode(last.charCodeAt(0) + 1), `${encoded}=`, `${encoded}A`, encoded.slice(1));
      }
    }
    for (const text of spellings) expect([text, isCanonicalBase64url(text)]).toEqual([text, roundTrips(text)]);
  });
});

describe('bytes without Buffer (the pooled decoder of the WebCrypto path)', () => {
  async function loadRuntime(): Promise<typeof import('../src/runtime.js')> {
    const context: Record<string, unknown> = { TextEncoder, TextDecoder };
    runInNewContext(await bundleForEdge('../src/runtime.ts', 'runtime'), context);
    return context.runtime as typeof import('../src/runtime.js');
  }

  it('fromBase64url, base64urlText and utf8Bytes give what Buffer gives, padding and +/ included; stray characters throw', async () => {
    const runtime = await loadRuntime();
    for (let i = 0; i < 400; i++) {
      const bytes = randomBytes(i % 300);
      const encoded = bytes.toString('base64url');
      expect(Buffer.from(runtime.fromBase64url(encoded)).equals(bytes)).toBe(true);
      expect(Buffer.from(runtime.fromBase64url(bytes.toString('base64'))).equals(bytes)).toBe(true);
    }
    const text = JSON.stringify({ name: 'Zoë 🙂', id: randomBytes(8).toString('hex') });
    expect(runtime.base64urlText(Buffer.from(text).toString('base64url'))).toBe(text);
    expect(Buffer.from(runtime.utf8Bytes(text)).equals(Buffer.from(text))).toBe(true);
    expect(Buffer.from(runtime.utf8Bytes('eyJ.eyJ')).toString()).toBe('eyJ.eyJ');
    for (const bad of ['A', 'AA A', 'AA.B', 'AAé=', 'AAAAA']) expect(() => runtime.fromBase64url(bad)).toThrow(/base64url/);
  });

  it('no two results share bytes, across pool boundaries: one token never sees another token’s bytes', async () => {
    const runtime = await loadRuntime();
    const results: [Uint8Array, Buffer][] = [];
    for (let i = 0; i < 300; i++) {
      const bytes = randomBytes(1 + (i % 500));
      results.push([runtime.fromBase64url(bytes.toString('base64url')), bytes]);
      const text = `${i}.`.repeat(1 + (i % 200));
      results.push([runtime.utf8Bytes(text), Buffer.from(text)]);
    }
    for (const [decoded] of results) decoded.fill(0xee);
    for (const [decoded, original] of results)
      expect([...decoded].every((b) => b === 0xee) && decoded.length === original.length).toBe(true);
    const regions = results.map(([decoded]) => [decoded.buffer, decoded.byteOffset, decoded.byteOffset + decoded.byteLength] as const);
    for (let i = 0; i < regions.length; i++) {
      for (let j = i + 1; j < regions.length; j++) {
        const [a, b] = [regions[i]!, regions[j]!];
        if (a[0] === b[0]) expect(a[2] <= b[1] || b[2] <= a[1]).toBe(true);
      }
    }
  });
});
