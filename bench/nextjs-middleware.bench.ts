/**
 * @gatehouse/nextjs: what the middleware and auth() do per request (read the cookie, check the
 * origin, verify the token with a cached key: `authenticate()`), against a raw verify of the same
 * token measured in the same run, on each runtime:
 *   - Node.js: authenticate/s                         vs raw crypto.verify/s
 *   - WebCrypto (an Edge-like V8 context, no process, Buffer or node:crypto): authenticate/s
 *                                                     vs raw crypto.subtle.verify/s
 * for RS256, ES256 and EdDSA. Goal: at least 0.8x of raw on each. Batches alternate as in
 * backend-verify.bench.ts; each side's figure is its 10th-percentile batch.
 */
import { generateKeyPairSync, randomBytes, sign, verify, type KeyObject } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { runInNewContext } from 'node:vm';
import { build } from 'esbuild';
import { authenticate } from '../packages/nextjs/src/server/authenticate.js';
import { resolveConfig } from '../packages/nextjs/src/server/config.js';
import type { RequestFacts } from '../packages/nextjs/src/server/request.js';
import { median } from './lib/median.js';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 3);
const ALGORITHMS = ['RS256', 'ES256', 'EdDSA'] as const;
type Alg = (typeof ALGORITHMS)[number];
const BATCH = 100;

function keyPair(alg: Alg) {
  if (alg === 'RS256') return generateKeyPairSync('rsa', { modulusLength: 2048 });
  if (alg === 'ES256') return generateKeyPairSync('ec', { namedCurve: 'P-256' });
  return generateKeyPairSync('ed25519');
}
const nodeParams = (alg: Alg, key: KeyObject) => (alg === 'ES256' ? { key, dsaEncoding: 'ieee-p1363' as const } : key);
const hash = (alg: Alg) => (alg === 'EdDSA' ? null : 'sha256');
const WEB: Record<Alg, { import: object; verify: object }> = {
  RS256: { import: { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256' }, verify: { name: 'RSASSA-PKCS1-v1_5' } },
  ES256: { import: { name: 'ECDSA', namedCurve: 'P-256' }, verify: { name: 'ECDSA', hash: 'SHA-256' } },
  EdDSA: { import: { name: 'Ed25519' }, verify: { name: 'Ed25519' } },
};
const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

async function batch(op: () => unknown): Promise<number> {
  const start = performance.now();
  for (let i = 0; i < BATCH; i++) await op();
  return ((performance.now() - start) * 1000) / BATCH;
}
const quantile = (values: number[], q: number) => [...values].sort((a, b) => a - b)[Math.floor((values.length - 1) * q)]!;

async function paired(label: string, baseLabel: string, base: () => unknown, measured: () => unknown) {
  for (let i = 0; i < 20; i++) {
    await batch(base);
    await batch(measured);
  }
  const bases: number[] = [];
  const values: number[] = [];
  const end = performance.now() + SECONDS * 1000;
  while (performance.now() < end || bases.length < 50) {
    bases.push(await batch(base));
    values.push(await batch(measured));
  }
  const perSecond = (us: number) => (1e6 / us).toFixed(0).padStart(7);
  const [b, m] = [quantile(bases, 0.1), quantile(values, 0.1)];
  const medianRatio = median(bases.map((x, i) => x / values[i]!));
  console.log(
    `  ${label.padEnd(30)} ${perSecond(m)}/s   ${baseLabel.padEnd(24)} ${perSecond(b)}/s   ratio ${(b / m).toFixed(2)}   (goal ≥ 0.8; ${bases.length} batch pairs; median batch ratio ${medianRatio.toFixed(2)})`,
  );
}

/** authenticate() bundled with @gatehouse/backend's sources, in a V8 context without node's globals. */
async function edgeAuthenticate(): Promise<typeof authenticate> {
  const root = new URL('../packages/', import.meta.url).pathname;
  const bundle = await build({
    stdin: { contents: `export { authenticate } from '${root}nextjs/src/server/authenticate.ts';`, resolveDir: root, loader: 'ts' },
    alias: { '@gatehouse/backend': `${root}backend/src/index.ts` },
    bundle: true,
    platform: 'neutral',
    format: 'iife',
    globalName: 'edge',
    target: 'es2022',
    write: false,
    logLevel: 'silent',
  });
  const context: Record<string, unknown> = {
    ...{ crypto: globalThis.crypto, fetch, Request, Response, Headers, AbortSignal, TextEncoder, TextDecoder, URL, atob, btoa },
    ...{ setTimeout, clearTimeout, console },
  };
  runInNewContext(`${bundle.outputFiles[0]!.text}\nthis.edge = edge;`, context);
  return (context.edge as { authenticate: typeof authenticate }).authenticate;
}

export async function run(): Promise<void> {
  const keys = ALGORITHMS.map((alg) => ({ alg, kid: `key_${alg.toLowerCase()}`, ...keyPair(alg) }));
  const jwks = { keys: keys.map((k) => ({ ...k.publicKey.export({ format: 'jwk' }), kid: k.kid, alg: k.alg, use: 'sig' })) };
  const server = createServer((_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(jwks)));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  // The JWKS is served at {issuer}/.well-known/jwks.json by any path: the server answers every URL.
  const config = resolveConfig({ issuer: `${base}/v1/environments/env_bench`, publishableKey: 'pk_test_bench', baseUrl: base });
  const edge = await edgeAuthenticate();
  try {
    for (const { alg, kid, privateKey, publicKey } of keys) {
      const now = Math.floor(Date.now() / 1000);
      const claims = {
        ...{ iss: config.issuer, sub: 'user_01jbench0000000000000000000', sid: 'sess_01jbench000000000000000000' },
        ...{ iat: now, nbf: now, exp: now + 3600, jti: randomBytes(16).toString('base64url'), azp: 'https://app.example.com' },
        ...{ org_id: 'org_01jbench0000000000000000000', org_slug: 'acme', org_role: 'admin', org_permissions: ['org:manage'] },
      };
      const input = `${b64({ alg, kid, typ: 'at+jwt' })}.${b64(claims)}`;
      const data = Buffer.from(input);
      const signature = sign(hash(alg), data, nodeParams(alg, privateKey));
      const token = `${input}.${signature.toString('base64url')}`;
      // A page load of the app's own origin, as the middleware sees it.
      const facts: RequestFacts = {
        ...{ authorization: null, cookie: token, origin: null, secFetchSite: 'same-origin', secFetchDest: 'document' },
        ...{ accept: 'text/html', host: 'app.example.com', forwardedHost: null, protocol: 'https:', method: 'GET' },
      };
      if (!(await authenticate(facts, config)).isSignedIn || !(await edge(facts, config)).isSignedIn) throw new Error('the bench token does not verify');
      const webKey = await crypto.subtle.importKey('spki', publicKey.export({ format: 'der', type: 'spki' }), WEB[alg].import as never, false, ['verify']);
      console.log(`  -- ${alg}`);
      await paired('Node.js: authenticate()', 'raw crypto.verify', () => verify(hash(alg), data, nodeParams(alg, publicKey), signature), () => authenticate(facts, config));
      await paired('WebCrypto: authenticate()', 'raw subtle.verify', () => crypto.subtle.verify(WEB[alg].verify as never, webKey, signature, data), () => edge(facts, config));
    }
  } finally {
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}
