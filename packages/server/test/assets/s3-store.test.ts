import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import S3rver from 's3rver';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { S3ObjectStore } from '../../src/assets/s3-store.js';
import type { S3Config } from '../../src/config.js';
import { ApiError } from '../../src/lib/errors.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { FIXTURE_SIZE, fixtures, makePng, sha256, SVG } from '../helpers/images.js';
import { json, me } from '../helpers/identity.js';
import { actAs, createOrg, person } from '../helpers/organizations.js';
import { describeImage, requestTicket, uploadKit, type UploadKit } from '../helpers/uploads.js';

/**
 * The S3 store against s3rver, a real S3-compatible server run in the test. s3rver enforces the
 * expiry of presigned URLs but verifies neither V4 signatures nor checksums, so here it accepts
 * bytes that real S3 refuses (403 SignatureDoesNotMatch for another Content-Type or length, 400
 * BadDigest for other bytes). The tests below say so where it matters, and show that the
 * post-upload check catches those bytes regardless.
 */

let server: S3rver;
let directory: string;
let config: S3Config;
let t: TestApp;
let kit: UploadKit;
let seed = 500;

beforeAll(async () => {
  directory = await mkdtemp(path.join(os.tmpdir(), 'gatehouse-s3rver-'));
  server = new S3rver({ address: '127.0.0.1', port: 0, directory, silent: true, configureBuckets: [{ name: 'gatehouse' }] });
  const { port } = await server.run();
  config = {
    endpoint: `http://127.0.0.1:${port}`,
    bucket: 'gatehouse',
    region: 'us-east-1',
    accessKeyId: 'S3RVER',
    secretAccessKey: 'S3RVER',
    publicBaseUrl: `http://127.0.0.1:${port}/gatehouse`,
  };
  t = await startTestApp({ objectStore: async () => new S3ObjectStore(config) });
  kit = await uploadKit(t);
});

afterAll(async () => {
  await t.close();
  await server.close();
  await rm(directory, { recursive: true, force: true });
});

async function upload(bytes: Buffer, ticket: { uploadUrl?: string; uploadHeaders?: Record<string, string> }, headers = {}) {
  return fetch(ticket.uploadUrl!, { method: 'PUT', headers: { ...ticket.uploadHeaders, ...headers }, body: new Uint8Array(bytes) });
}

async function refusal(promise: Promise<unknown>): Promise<ApiError> {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  if (!(error instanceof ApiError)) throw new Error(`expected an ApiError, got ${String(error)}`);
  return error;
}

describe('S3 object store (s3rver)', () => {
  it('presigns a PUT that signs Content-Type, Content-Length and the SHA-256 checksum as headers', async () => {
    const png = makePng(5, 3, { seed: seed++ });
    const ticket = await kit.ticket(kit.describe(png, 'image/png', FIXTURE_SIZE));
    const url = new URL(ticket.uploadUrl!);
    expect(url.pathname).toBe(`/gatehouse/${kit.environment.id}/${sha256(png)}`);
    expect(url.searchParams.get('X-Amz-SignedHeaders')!.split(';').sort()).toEqual([
      'cache-control',
      'content-length',
      'content-type',
      'host',
      'x-amz-checksum-sha256',
    ]);
    expect(url.searchParams.get('X-Amz-Expires')).toBe('300');
    // The checksum travels as a header (S3 ignores it in the query), so the client must send it.
    expect(url.searchParams.has('x-amz-checksum-sha256')).toBe(false);
    expect(ticket.uploadHeaders).toEqual({
      'Content-Type': 'image/png',
      'Cache-Control': 'public, max-age=31536000, immutable',
      'x-amz-checksum-sha256': Buffer.from(sha256(png), 'hex').toString('base64'),
    });
    expect(ticket.publicUrl).toBe(`${config.publicBaseUrl}/${kit.environment.id}/${sha256(png)}`);
  });

  it('happy path: ticket, PUT to the bucket, verify, accept the URL, read it back; then dedupe', async () => {
    const jpeg = fixtures.baselineJpeg();
    const ticket = await kit.ticket(kit.describe(jpeg, 'image/jpeg', FIXTURE_SIZE));
    const put = await upload(jpeg, ticket);
    expect(put.status).toBe(200);

    expect(await kit.assets.verifyStoredObject(kit.environment.id, sha256(jpeg))).toEqual({
      contentType: 'image/jpeg',
      size: jpeg.length,
      ...FIXTURE_SIZE,
    });
    // s3rver listens on a loopback host, so this http publicUrl is the instance's own and acceptable.
    expect(await kit.assets.acceptImageUrl(kit.environment, ticket.publicUrl)).toBe(ticket.publicUrl);

    const read = await fetch(ticket.publicUrl);
    expect(read.status).toBe(200);
    expect(read.headers.get('content-type')).toBe('image/jpeg');
    expect(read.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    expect(Buffer.from(await read.arrayBuffer()).equals(jpeg)).toBe(true);

    expect(await kit.ticket(kit.describe(jpeg, 'image/jpeg', FIXTURE_SIZE))).toEqual({ publicUrl: ticket.publicUrl, alreadyExists: true });
    const production = await t.tenancy.getEnvironment(t.project.production.id);
    expect((await kit.ticket(kit.describe(jpeg, 'image/jpeg', FIXTURE_SIZE), production)).alreadyExists).toBe(false);
  });

  it('s3rver refuses an expired presigned URL', async () => {
    const png = makePng(5, 3, { seed: seed++ });
    const past = new S3ObjectStore(config, { now: () => Date.now() - 6 * 60 * 1000 });
    const target = await past.createUploadTarget({
      key: { namespace: kit.environment.id, sha256: sha256(png) },
      contentType: 'image/png',
      contentLength: png.length,
      ...FIXTURE_SIZE,
    });
    await past.close();
    const put = await upload(png, { uploadUrl: target.url, uploadHeaders: target.headers });
    expect(put.status).toBe(403);
    expect(await put.text()).toMatch(/expired/);
  });

  it('the post-upload check refuses and deletes SVG bytes under an image ticket (real S3 refuses them at PUT)', async () => {
    const ticket = await kit.ticket(kit.describe(SVG, 'image/png', FIXTURE_SIZE));
    // The sha256 is the SVG's own, so even real S3 would store these bytes: only the check stops them.
    expect((await upload(SVG, ticket)).status).toBe(200);
    const error = await refusal(kit.assets.verifyStoredObject(kit.environment.id, sha256(SVG)));
    expect(error.code).toBe('unsupported_image_type');
    expect(await t.objectStore.exists({ namespace: kit.environment.id, sha256: sha256(SVG) })).toBe(false);
    expect((await refusal(kit.assets.acceptImageUrl(kit.environment, ticket.publicUrl))).message).toMatch(/No image was uploaded/);
  });

  it('the post-upload check refuses and deletes bytes that do not match the sha256 (s3rver does not check the checksum)', async () => {
    const png = makePng(5, 3, { seed: seed++ });
    const ticket = await kit.ticket(kit.describe(png, 'image/png', FIXTURE_SIZE));
    const other = makePng(5, 3, { seed: seed++ });
    expect((await upload(other, ticket)).status).toBe(200); // real S3: 400 BadDigest
    const error = await refusal(kit.assets.verifyStoredObject(kit.environment.id, sha256(png)));
    expect(error.message).toMatch(/do not match the sha256/);
    expect(await t.objectStore.exists({ namespace: kit.environment.id, sha256: sha256(png) })).toBe(false);
  });

  it('the post-upload check refuses a stored Content-Type other than an image type (s3rver does not check the signature)', async () => {
    const png = makePng(5, 3, { seed: seed++ });
    const ticket = await kit.ticket(kit.describe(png, 'image/png', FIXTURE_SIZE));
    expect((await upload(png, ticket, { 'Content-Type': 'text/html' })).status).toBe(200); // real S3: 403
    expect((await refusal(kit.assets.verifyStoredObject(kit.environment.id, sha256(png)))).code).toBe('unsupported_image_type');
  });

  it('when the server vouches for the checksum, HEAD and a ranged GET of the first bytes suffice', async () => {
    const png = makePng(5, 3, { seed: seed++ });
    const ticket = await kit.ticket(kit.describe(png, 'image/png', FIXTURE_SIZE));
    expect((await upload(png, ticket)).status).toBe(200);
    // s3rver does not return stored checksums; add the one real S3 returns, and record the GETs.
    const gets: (string | undefined)[] = [];
    const probe = new S3ObjectStore(config);
    probe.client.middlewareStack.add(
      (next, context) => async (args) => {
        const input = args.input as { Range?: string };
        if (context.commandName === 'GetObjectCommand') gets.push(input.Range);
        const result = await next(args);
        if (context.commandName === 'HeadObjectCommand') {
          (result.output as { ChecksumSHA256?: string }).ChecksumSHA256 = Buffer.from(sha256(png), 'hex').toString('base64');
        }
        return result;
      },
      { step: 'initialize' },
    );
    expect(await probe.verify({ namespace: kit.environment.id, sha256: sha256(png) })).toEqual({
      contentType: 'image/png',
      size: png.length,
      ...FIXTURE_SIZE,
    });
    expect(gets).toEqual(['bytes=0-65535']);
    await probe.close();
  });

  it('through the API with a session: ticket, PUT to the bucket, PATCH /v1/me and /v1/me/organization; unverifiable bytes are refused and deleted', async () => {
    const owner = await person(t, undefined, 's3-owner');
    const org = await createOrg(t, owner.userId, { name: 'Bucketed' });
    await actAs(t, owner, org.id);

    const ticketFor = async (bytes: Buffer, purpose: 'user_avatar' | 'organization_image') => {
      const response = await requestTicket(t, owner.accessToken, describeImage(bytes, 'image/png', FIXTURE_SIZE, { purpose }));
      expect(response.statusCode, response.body).toBe(200);
      return json(response);
    };
    const avatar = makePng(5, 3, { seed: seed++ });
    const avatarTicket = await ticketFor(avatar, 'user_avatar');
    expect((await upload(avatar, avatarTicket)).status).toBe(200);
    const saved = await t.call({
      method: 'PATCH',
      url: '/v1/me',
      credential: owner.accessToken,
      payload: { imageUrl: avatarTicket.publicUrl },
    });
    expect(saved.statusCode, saved.body).toBe(200);
    expect(json(await me(t, owner.accessToken)).user.imageUrl).toBe(avatarTicket.publicUrl);

    const image = makePng(5, 3, { seed: seed++ });
    const imageTicket = await ticketFor(image, 'organization_image');
    expect((await upload(image, imageTicket)).status).toBe(200);
    const patchOrg = (imageUrl: string) =>
      t.call({ method: 'PATCH', url: '/v1/me/organization', credential: owner.accessToken, payload: { imageUrl } });
    expect((await patchOrg(imageTicket.publicUrl)).statusCode).toBe(200);
    const current = await t.call({ method: 'GET', url: '/v1/me/organization', credential: owner.accessToken });
    expect(json(current).imageUrl).toBe(imageTicket.publicUrl);

    // Other bytes under a ticket (s3rver keeps them; real S3 answers 400 BadDigest): the PATCH's
    // verification refuses the URL and deletes the object.
    const claimed = makePng(5, 3, { seed: seed++ });
    const badTicket = await ticketFor(claimed, 'organization_image');
    expect((await upload(makePng(5, 3, { seed: seed++ }), badTicket)).status).toBe(200);
    const refused = await patchOrg(badTicket.publicUrl);
    expect(refused.statusCode).toBe(400);
    expect(json(refused).error).toMatchObject({ code: 'invalid_request', details: { fields: ['imageUrl'] } });
    expect(json(refused).error.message).toMatch(/do not match the sha256/);
    expect(await t.objectStore.exists({ namespace: kit.environment.id, sha256: sha256(claimed) })).toBe(false);
    expect(json(await t.call({ method: 'GET', url: '/v1/me/organization', credential: owner.accessToken })).imageUrl).toBe(
      imageTicket.publicUrl,
    );
  });

  it('stores a project logo in the bucket under the project namespace', async () => {
    const webp = fixtures.extendedWebp();
    const response = await t.call({
      method: 'PUT',
      url: `/v1/platform/projects/${t.project.id}/logo`,
      credential: t.platformKey,
      headers: { 'content-type': 'image/webp' },
      payload: webp,
    });
    expect(response.statusCode, response.body).toBe(200);
    const { logoUrl } = response.json();
    expect(logoUrl).toBe(`${config.publicBaseUrl}/${t.project.id}/${sha256(webp)}`);
    const read = await fetch(logoUrl);
    expect(read.headers.get('content-type')).toBe('image/webp');
    expect(Buffer.from(await read.arrayBuffer()).equals(webp)).toBe(true);
  });

  it('serves no upload or read routes of its own', async () => {
    const response = await t.app.inject({ method: 'GET', url: `/v1/assets/${kit.environment.id}/${'0'.repeat(64)}` });
    expect(response.statusCode).toBe(404);
    expect(response.json().error.message).toMatch(/No route/);
  });
});
