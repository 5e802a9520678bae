import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FilesystemObjectStore } from '../../src/assets/filesystem-store.js';
import { AssetService } from '../../src/assets/service.js';
import { deriveSubkey } from '../../src/lib/cursor.js';
import { ApiError } from '../../src/lib/errors.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { FIXTURE_SIZE, fixtures, makePng, sha256 } from '../helpers/images.js';
import { uploadKit, type UploadKit } from '../helpers/uploads.js';

let t: TestApp;
let kit: UploadKit;

beforeAll(async () => {
  t = await startTestApp();
  kit = await uploadKit(t);
});
afterAll(() => t.close());

async function refusal(promise: Promise<unknown>): Promise<ApiError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof ApiError) return error;
    throw error;
  }
  throw new Error('expected a refusal');
}

describe('upload tickets', () => {
  it('issues a signed PUT URL bound to the key, with the public URL under the environment', async () => {
    const png = makePng(8, 6, { seed: 1 });
    const ticket = await kit.ticket(kit.describe(png, 'image/png', { width: 8, height: 6 }));
    expect(ticket.alreadyExists).toBe(false);
    expect(ticket.publicUrl).toBe(`http://gatehouse.test/v1/assets/${t.project.development.id}/${sha256(png)}`);
    expect(ticket.uploadUrl?.startsWith(`${ticket.publicUrl}?`)).toBe(true);
    expect(ticket.uploadHeaders).toEqual({ 'Content-Type': 'image/png' });
  });

  it('lowercases the sha256', async () => {
    const png = makePng(8, 6, { seed: 2 });
    const ticket = await kit.ticket(kit.describe(png, 'image/png', { width: 8, height: 6 }, { sha256: sha256(png).toUpperCase() }));
    expect(ticket.publicUrl.endsWith(sha256(png))).toBe(true);
  });

  it('refuses SVG, saying why', async () => {
    const error = await refusal(kit.ticket(kit.describe(Buffer.from('<svg/>'), 'image/svg+xml', { width: 1, height: 1 })));
    expect(error.statusCode).toBe(422);
    expect(error.code).toBe('unsupported_image_type');
    expect(error.message).toMatch(/SVG.*script.*sign-in screens/);
  });

  it.each(['image/gif', 'text/html', 'application/octet-stream', 'image/jpg'])('refuses the type %s', async (type) => {
    const error = await refusal(kit.ticket(kit.describe(makePng(2, 2), type, { width: 2, height: 2 })));
    expect(error.code).toBe('unsupported_image_type');
  });

  it('accepts exactly 1,048,576 bytes and refuses one more with image_too_large', async () => {
    const base = kit.describe(makePng(2, 2, { seed: 3 }), 'image/png', { width: 2, height: 2 });
    expect((await kit.ticket({ ...base, contentLength: 1_048_576 })).uploadUrl).toBeDefined();
    const error = await refusal(kit.ticket({ ...base, contentLength: 1_048_577 }));
    expect(error.statusCode).toBe(422);
    expect(error.code).toBe('image_too_large');
  });

  it('refuses dimensions above 4096 with image_too_large, and non-positive ones as invalid', async () => {
    const base = kit.describe(makePng(2, 2, { seed: 4 }), 'image/png', { width: 2, height: 2 });
    expect((await kit.ticket({ ...base, width: 4096, height: 4096 })).uploadUrl).toBeDefined();
    expect((await refusal(kit.ticket({ ...base, width: 4097 }))).code).toBe('image_too_large');
    expect((await refusal(kit.ticket({ ...base, height: 65535 }))).code).toBe('image_too_large');
    expect((await refusal(kit.ticket({ ...base, width: 0 }))).code).toBe('invalid_request');
    expect((await refusal(kit.ticket({ ...base, height: -3 }))).code).toBe('invalid_request');
    expect((await refusal(kit.ticket({ ...base, contentLength: 0 }))).code).toBe('invalid_request');
    expect((await refusal(kit.ticket({ ...base, contentLength: 1e20 }))).code).toBe('image_too_large');
    expect((await refusal(kit.ticket({ ...base, width: 1.5 }))).code).toBe('invalid_request');
  });

  it.each([
    ['63 characters', 'a'.repeat(63)],
    ['65 characters', 'a'.repeat(65)],
    ['non-hex', 'g'.repeat(64)],
    ['a path', `../${'a'.repeat(61)}`],
  ])('refuses a sha256 of %s', async (_what, value) => {
    const error = await refusal(kit.ticket(kit.describe(makePng(2, 2), 'image/png', { width: 2, height: 2 }, { sha256: value })));
    expect(error.code).toBe('invalid_request');
    expect(error.details).toEqual({ fields: ['sha256'] });
  });

  it('refuses an unknown purpose', async () => {
    const error = await refusal(kit.ticket(kit.describe(makePng(2, 2), 'image/png', { width: 2, height: 2 }, { purpose: 'project_logo' })));
    expect(error.code).toBe('invalid_request');
  });
});

describe('the filesystem store: ticket, PUT, GET', () => {
  it.each([
    ['PNG', () => makePng(5, 3, { seed: 10 }), 'image/png'],
    ['baseline JPEG', fixtures.baselineJpeg, 'image/jpeg'],
    ['progressive JPEG', fixtures.progressiveJpeg, 'image/jpeg'],
    ['lossy WebP', fixtures.lossyWebp, 'image/webp'],
    ['lossless WebP', fixtures.losslessWebp, 'image/webp'],
    ['extended WebP', fixtures.extendedWebp, 'image/webp'],
  ])('stores and serves a real %s with safe headers', async (_name, make, type) => {
    const bytes = make();
    const ticket = await kit.ticket(kit.describe(bytes, type, FIXTURE_SIZE));
    const put = await kit.put(ticket, bytes);
    expect(put.statusCode, put.body).toBe(200);
    expect(put.json()).toEqual({ publicUrl: ticket.publicUrl });

    const get = await kit.get(ticket.publicUrl);
    expect(get.statusCode).toBe(200);
    expect(get.rawPayload.equals(bytes)).toBe(true);
    expect(get.headers['content-type']).toBe(type);
    expect(get.headers['x-content-type-options']).toBe('nosniff');
    expect(get.headers['content-security-policy']).toBe("default-src 'none'");
    expect(get.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(get.headers.etag).toBe(`"${sha256(bytes)}"`);

    const revalidate = await kit.get(ticket.publicUrl, { 'if-none-match': `"${sha256(bytes)}"` });
    expect(revalidate.statusCode).toBe(304);
    expect(revalidate.rawPayload.length).toBe(0);
  });

  it('dedupes: the same file twice is one object, and the second ticket says alreadyExists without an uploadUrl', async () => {
    const png = makePng(5, 3, { seed: 11 });
    const first = await kit.ticket(kit.describe(png, 'image/png', FIXTURE_SIZE));
    expect((await kit.put(first, png)).statusCode).toBe(200);
    const second = await kit.ticket(kit.describe(png, 'image/png', FIXTURE_SIZE));
    expect(second).toEqual({ publicUrl: first.publicUrl, alreadyExists: true });
    // A second PUT of the first ticket is accepted and changes nothing.
    expect((await kit.put(first, png)).statusCode).toBe(200);
    const root = (t.objectStore as FilesystemObjectStore).root;
    const files = (await readdir(path.join(root, t.project.development.id))).filter((f) => f === sha256(png));
    expect(files).toHaveLength(1);
  });

  it('answers 404 for an object that is not stored, and for keys that are not keys', async () => {
    for (const url of [
      `/v1/assets/${t.project.development.id}/${'0'.repeat(64)}`,
      `/v1/assets/${t.project.development.id}/..%2F..%2Finstance-secret`,
      '/v1/assets/..%2F..%2Fetc/passwd',
      `/v1/assets/.tmp/${'0'.repeat(64)}`,
    ]) {
      const response = await t.app.inject({ method: 'GET', url });
      expect(response.statusCode, url).toBe(404);
      expect(response.json().error.code).toBe('not_found');
    }
  });

  it('verifies a stored object before its URL may be saved, and refuses URLs of other environments', async () => {
    const png = makePng(5, 3, { seed: 12 });
    const ticket = await kit.ticket(kit.describe(png, 'image/png', FIXTURE_SIZE));
    // The test instance is not on a loopback host, so its own http URLs are refused outright.
    expect((await refusal(kit.assets.acceptImageUrl(kit.environment, ticket.publicUrl))).message).toMatch(/https/);

    // The same objects, seen by an instance running on localhost.
    const root = (t.objectStore as FilesystemObjectStore).root;
    const local = new AssetService(
      t.store,
      await FilesystemObjectStore.open({ root, baseUrl: 'http://localhost:4000', signingKey: deriveSubkey(t.instanceSecret, 'uploads') }),
    );
    const localUrl = `http://localhost:4000/v1/assets/${kit.environment.id}/${sha256(png)}`;
    // Not uploaded yet.
    expect((await refusal(local.acceptImageUrl(kit.environment, localUrl))).message).toMatch(/No image was uploaded/);
    expect((await kit.put(ticket, png)).statusCode).toBe(200);
    expect(await local.acceptImageUrl(kit.environment, localUrl)).toBe(localUrl);
    expect(await local.verifyStoredObject(kit.environment.id, sha256(png))).toEqual({
      contentType: 'image/png',
      size: png.length,
      ...FIXTURE_SIZE,
    });

    const production = await t.tenancy.getEnvironment(t.project.production.id);
    expect((await refusal(local.acceptImageUrl(production, localUrl))).message).toMatch(/not an upload of this environment/);
    expect(await local.acceptImageUrl(production, 'https://cdn.example.com/a.png')).toBe('https://cdn.example.com/a.png');
  });

  it('registers POST /v1/me/assets/upload-url behind a session credential', async () => {
    const body = kit.describe(makePng(2, 2), 'image/png', { width: 2, height: 2 });
    const withKey = await t.call({
      method: 'POST',
      url: '/v1/me/assets/upload-url',
      credential: t.project.development.publishableKey,
      payload: body,
    });
    expect(withKey.statusCode).toBe(403);
    expect(withKey.json().error.code).toBe('credential_not_accepted');
    const anonymous = await t.call({ method: 'POST', url: '/v1/me/assets/upload-url', payload: body });
    expect(anonymous.statusCode).toBe(401);
  });

  it('removes temporary files left by a process that died mid-write, and never shows them as objects', async () => {
    const root = (t.objectStore as FilesystemObjectStore).root;
    const { utimes, writeFile } = await import('node:fs/promises');
    const orphan = path.join(root, '.tmp', `${'b'.repeat(64)}.deadbeef`);
    await writeFile(orphan, 'half an image');
    const old = new Date(Date.now() - 60 * 60 * 1000);
    await utimes(orphan, old, old);
    const key = { namespace: t.project.development.id, sha256: 'b'.repeat(64) };
    expect(await t.objectStore.exists(key)).toBe(false);
    await FilesystemObjectStore.open({ root, baseUrl: 'http://gatehouse.test', signingKey: Buffer.alloc(32) });
    expect(await readdir(path.join(root, '.tmp'))).not.toContain(path.basename(orphan));
  });
});

describe('project logo', () => {
  const logoUrl = (projectId: string) => `/v1/platform/projects/${projectId}/logo`;

  it('stores the logo under the project namespace and shows it on the project', async () => {
    const png = makePng(6, 4, { seed: 20 });
    const response = await t.call({
      method: 'PUT',
      url: logoUrl(t.project.id),
      credential: t.platformKey,
      headers: { 'content-type': 'image/png' },
      payload: png,
    });
    expect(response.statusCode, response.body).toBe(200);
    const expected = `http://gatehouse.test/v1/assets/${t.project.id}/${sha256(png)}`;
    expect(response.json()).toEqual({ logoUrl: expected });

    const project = await t.call({ method: 'GET', url: `/v1/platform/projects/${t.project.id}`, credential: t.platformKey });
    expect(project.json().logoUrl).toBe(expected);
    const served = await kit.get(expected);
    expect(served.statusCode).toBe(200);
    expect(served.headers['content-type']).toBe('image/png');

    const removed = await t.call({ method: 'DELETE', url: logoUrl(t.project.id), credential: t.platformKey });
    expect(removed.statusCode).toBe(204);
    const after = await t.call({ method: 'GET', url: `/v1/platform/projects/${t.project.id}`, credential: t.platformKey });
    expect(after.json().logoUrl).toBeNull();
  });

  it('accepts a real JPEG and WebP', async () => {
    for (const [bytes, type] of [
      [fixtures.baselineJpeg(), 'image/jpeg'],
      [fixtures.lossyWebp(), 'image/webp'],
    ] as const) {
      const response = await t.call({
        method: 'PUT',
        url: logoUrl(t.project.id),
        credential: t.platformKey,
        headers: { 'content-type': type },
        payload: bytes,
      });
      expect(response.statusCode, response.body).toBe(200);
    }
  });

  it('takes only the platform key, and 404s for an unknown project', async () => {
    const png = makePng(2, 2);
    const withSecret = await t.call({
      method: 'PUT',
      url: logoUrl(t.project.id),
      credential: t.project.production.secretKey,
      headers: { 'content-type': 'image/png' },
      payload: png,
    });
    expect(withSecret.statusCode).toBe(403);
    const unknown = await t.call({
      method: 'PUT',
      url: logoUrl('proj_nope'),
      credential: t.platformKey,
      headers: { 'content-type': 'image/png' },
      payload: png,
    });
    expect(unknown.statusCode).toBe(404);
  });
});
