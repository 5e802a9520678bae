import { createHmac, generateKeyPairSync, randomBytes, sign, type KeyObject } from 'node:crypto';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { TokenAlgorithm } from '../../src/keys.js';

export interface TestKey {
  kid: string;
  alg: TokenAlgorithm;
  privateKey: KeyObject;
  publicKey: KeyObject;
  jwk: Record<string, unknown> & { kid: string; alg: string };
  pem: string;
}

export function makeKey(alg: TokenAlgorithm, kid = `key_${randomBytes(8).toString('hex')}`): TestKey {
  const pair =
    alg === 'RS256'
      ? generateKeyPairSync('rsa', { modulusLength: 2048 })
      : alg === 'ES256'
        ? generateKeyPairSync('ec', { namedCurve: 'P-256' })
        : generateKeyPairSync('ed25519');
  return {
    kid,
    alg,
    ...pair,
    jwk: { ...pair.publicKey.export({ format: 'jwk' }), kid, alg, use: 'sig' },
    pem: pair.publicKey.export({ format: 'pem', type: 'spki' }).toString(),
  };
}

const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

export function signWith(key: TestKey, claims: Record<string, unknown>, header: Record<string, unknown> = {}): string {
  const input = `${b64({ alg: key.alg, kid: key.kid, typ: 'at+jwt', ...header })}.${b64(claims)}`;
  const data = Buffer.from(input);
  const signature =
    key.alg === 'RS256'
      ? sign('sha256', data, key.privateKey)
      : key.alg === 'ES256'
        ? sign('sha256', data, { key: key.privateKey, dsaEncoding: 'ieee-p1363' })
        : sign(null, data, key.privateKey);
  return `${input}.${signature.toString('base64url')}`;
}

/** An HS256 token whose HMAC secret is the given text (the classic alg-confusion forgery). */
export function signHmac(secret: string, claims: Record<string, unknown>, header: Record<string, unknown>): string {
  const input = `${b64({ alg: 'HS256', typ: 'at+jwt', ...header })}.${b64(claims)}`;
  return `${input}.${createHmac('sha256', secret).update(input).digest('base64url')}`;
}

export function unsigned(claims: Record<string, unknown>, header: Record<string, unknown>): string {
  return `${b64({ alg: 'none', typ: 'at+jwt', ...header })}.${b64(claims)}.`;
}

export interface TestIssuer {
  issuer: string;
  jwksUrl: string;
  keys: TestKey[];
  /** How many times the JWKS was requested. */
  fetches: number;
  /** Answer the JWKS with this status instead of the keys. */
  failWith: number | undefined;
  /** Never answer (a JWKS fetch that times out). */
  hang: boolean;
  /** Claims of a valid token of this issuer, now; `overrides` replace or add claims. */
  claims(overrides?: Record<string, unknown>): Record<string, unknown>;
  token(overrides?: Record<string, unknown>, header?: Record<string, unknown>, key?: TestKey): string;
  close(): Promise<void>;
}

/** A token issuer of the test's own: keys it made, published by a real HTTP server that counts fetches. */
export async function startIssuer(keys: TestKey[]): Promise<TestIssuer> {
  const hanging = new Set<ServerResponse>();
  const server = createServer((request, response) => {
    if (request.url !== '/.well-known/jwks.json') return void response.writeHead(404).end();
    issuer.fetches += 1;
    if (issuer.hang) return void hanging.add(response);
    if (issuer.failWith) return void response.writeHead(issuer.failWith).end('down');
    response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys: issuer.keys.map((k) => k.jwk) }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const issuer: TestIssuer = {
    issuer: url,
    jwksUrl: `${url}/.well-known/jwks.json`,
    keys,
    fetches: 0,
    failWith: undefined,
    hang: false,
    claims(overrides = {}) {
      const now = Math.floor(Date.now() / 1000);
      return {
        iss: url,
        sub: 'user_test',
        sid: 'sess_test',
        iat: now,
        nbf: now,
        exp: now + 300,
        jti: randomBytes(8).toString('base64url'),
        ...overrides,
      };
    },
    token(overrides = {}, header = {}, key = issuer.keys[0]!) {
      return signWith(key, issuer.claims(overrides), header);
    },
    async close() {
      for (const response of hanging) response.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  return issuer;
}
