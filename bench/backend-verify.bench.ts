/**
 * @gatehouse/backend: offline verification, in process, each figure against its limit measured in the
 * same run on this machine:
 *   - verifyToken/s, key cached from a JWKS        vs raw crypto.verify/s of the same input and key
 *   - verifyToken/s                                vs jose's jwtVerify/s with a local key set
 *   - authenticateRequest/s (fetch Request)        vs verifyToken/s (the cost of reading the request)
 * for RS256, ES256 and EdDSA. The two sides alternate in short batches (100 operations each) and
 * each side's figure is its 10th-percentile batch: a verification takes 15–60 µs, so a batch is a few
 * ms, and on a shared machine most batches are stretched by other processes; the fastest tenth are
 * the ones that ran undisturbed, on both sides alike. The median batch ratio is printed beside it.
 */
import { generateKeyPairSync, randomBytes, sign, verify, type KeyObject } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createLocalJWKSet, jwtVerify } from 'jose';
import { authenticateRequest, verifyToken } from '../packages/backend/src/index.js';
import { median } from './lib/median.js';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 3);
const ALGORITHMS = ['RS256', 'ES256', 'EdDSA'] as const;
type Alg = (typeof ALGORITHMS)[number];

function keyPair(alg: Alg) {
  if (alg === 'RS256') return generateKeyPairSync('rsa', { modulusLength: 2048 });
  if (alg === 'ES256') return generateKeyPairSync('ec', { namedCurve: 'P-256' });
  return generateKeyPairSync('ed25519');
}

function rawVerify(alg: Alg, data: Buffer, key: KeyObject, signature: Buffer): boolean {
  if (alg === 'RS256') return verify('sha256', data, key, signature);
  if (alg === 'ES256') return verify('sha256', data, { key, dsaEncoding: 'ieee-p1363' }, signature);
  return verify(null, data, key, signature);
}

function rawSign(alg: Alg, data: Buffer, key: KeyObject): Buffer {
  if (alg === 'RS256') return sign('sha256', data, key);
  if (alg === 'ES256') return sign('sha256', data, { key, dsaEncoding: 'ieee-p1363' });
  return sign(null, data, key);
}

const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

const BATCH = 100;

/** Microseconds per operation over one batch, run back to back (awaited: the async sides are). */
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
    `  ${label.padEnd(32)} ${perSecond(m)}/s   ${baseLabel.padEnd(26)} ${perSecond(b)}/s   ratio ${(b / m).toFixed(2)}   (${bases.length} batch pairs; median batch ratio ${medianRatio.toFixed(2)})`,
  );
}

export async function run(): Promise<void> {
  const keys = ALGORITHMS.map((alg) => ({ alg, kid: `key_${alg.toLowerCase()}`, ...keyPair(alg) }));
  const jwks = { keys: keys.map((k) => ({ ...k.publicKey.export({ format: 'jwk' }), kid: k.kid, alg: k.alg, use: 'sig' })) };
  const server = createServer((_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(jwks)));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/environments/env_bench`;
  const options = { issuer, jwksUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}/jwks.json` };
  const joseKeys = createLocalJWKSet(jwks as Parameters<typeof createLocalJWKSet>[0]);

  try {
    for (const { alg, kid, privateKey, publicKey } of keys) {
      const now = Math.floor(Date.now() / 1000);
      // A token the size of a real one: an organization's claims included.
      const claims = {
        iss: issuer,
        sub: 'user_01jbench0000000000000000000',
        sid: 'sess_01jbench000000000000000000',
        iat: now,
        nbf: now,
        exp: now + 3600,
        jti: randomBytes(16).toString('base64url'),
        azp: 'https://app.example.com',
        org_id: 'org_01jbench0000000000000000000',
        org_slug: 'acme',
        org_role: 'admin',
        org_permissions: ['org:manage', 'org:members:manage'],
      };
      const input = `${b64({ alg, kid, typ: 'at+jwt' })}.${b64(claims)}`;
      const data = Buffer.from(input);
      const signature = rawSign(alg, data, privateKey);
      const token = `${input}.${signature.toString('base64url')}`;
      await verifyToken(token, options); // loads the key set
      const request = new Request('https://api.example.com/orders', { headers: { authorization: `Bearer ${token}` } });
      const raw = () => rawVerify(alg, data, publicKey, signature);
      const ours = () => verifyToken(token, options);
      const jose = () => jwtVerify(token, joseKeys, { issuer, typ: 'at+jwt' });
      console.log(`  -- ${alg}`);
      await paired('verifyToken (cached key)', 'raw crypto.verify', raw, ours);
      await paired('verifyToken (cached key)', "jose's jwtVerify", jose, ours);
      await paired('authenticateRequest (Request)', 'verifyToken', ours, () => authenticateRequest(request, options));
    }
  } finally {
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}
