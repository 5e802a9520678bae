import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FilesystemObjectStore } from '../../src/assets/filesystem-store.js';
import { startTestApp, type TestApp, type TestEnvironment } from '../helpers/app.js';
import { json, me } from '../helpers/identity.js';
import { FIXTURE_SIZE, fixtures, makePng, sha256, SVG } from '../helpers/images.js';
import { actAs, addMember, createOrg, person, type Person } from '../helpers/organizations.js';
import { describeImage, putToApp, requestTicket, uploadThroughApi } from '../helpers/uploads.js';

/**
 * Uploads through the API with real sessions, on an instance whose asset URLs are on localhost:
 * plain http, accepted only because they are this instance's own uploads on a loopback host.
 */
const LOCAL = 'http://localhost:4000';

let t: TestApp;
let dev: TestEnvironment;
let user: Person;
let seed = 9000;
const png = () => makePng(5, 3, { seed: seed++ });

beforeAll(async () => {
  t = await startTestApp({ assetBaseUrl: LOCAL });
  dev = t.project.development;
  user = await person(t, undefined, 'avatar');
}, 60_000);
afterAll(() => t.close());

const patchMe = (who: Person, payload: Record<string, unknown>) =>
  t.call({ method: 'PATCH', url: '/v1/me', credential: who.accessToken, payload });

function expectImageUrlRefused(response: { statusCode: number; body: string; json(): any }, message?: RegExp, label = '') {
  expect(response.statusCode, `${label} ${response.body}`).toBe(400);
  expect(response.json().error, label).toMatchObject({ code: 'invalid_request', details: { fields: ['imageUrl'] } });
  if (message) expect(response.json().error.message, label).toMatch(message);
}

async function objectsOf(namespace: string): Promise<string[]> {
  return readdir(path.join((t.objectStore as FilesystemObjectStore).root, namespace)).catch(() => []);
}

describe('profile pictures: ticket, PUT, PATCH /v1/me, GET /v1/me', () => {
  it.each([
    ['PNG', 'image/png', () => makePng(5, 3, { seed: 8000 })],
    ['JPEG', 'image/jpeg', fixtures.baselineJpeg],
    ['WebP', 'image/webp', fixtures.lossyWebp],
  ])('%s', async (_name, type, file) => {
    const bytes = file();
    const ticketResponse = await requestTicket(t, user.accessToken, describeImage(bytes, type, FIXTURE_SIZE));
    expect(ticketResponse.statusCode, ticketResponse.body).toBe(200);
    const ticket = json(ticketResponse);
    expect(ticket).toMatchObject({ alreadyExists: false, publicUrl: `${LOCAL}/v1/assets/${dev.id}/${sha256(bytes)}` });
    expect(ticket.uploadUrl).toEqual(expect.any(String));

    const put = await putToApp(t, ticket, bytes);
    expect(put.statusCode, put.body).toBe(200);
    expect(json(put)).toEqual({ publicUrl: ticket.publicUrl });

    const patched = await patchMe(user, { imageUrl: ticket.publicUrl });
    expect(patched.statusCode, patched.body).toBe(200);
    expect(json(patched).imageUrl).toBe(ticket.publicUrl);
    expect(json(await me(t, user.accessToken)).user.imageUrl).toBe(ticket.publicUrl);

    const served = await t.app.inject({ method: 'GET', url: new URL(ticket.publicUrl).pathname });
    expect(served.statusCode).toBe(200);
    expect(served.headers['content-type']).toBe(type);
    expect(served.rawPayload.equals(bytes)).toBe(true);
  });

  it('refuses SVG at the ticket, saying why', async () => {
    const response = await requestTicket(t, user.accessToken, describeImage(SVG, 'image/svg+xml', FIXTURE_SIZE));
    expect(response.statusCode).toBe(422);
    expect(json(response).error.code).toBe('unsupported_image_type');
    expect(json(response).error.message).toMatch(/SVG.*can carry script/);
  });

  it('refuses SVG bytes declared as PNG at the PUT, so there is nothing to save', async () => {
    const ticket = json(await requestTicket(t, user.accessToken, describeImage(SVG, 'image/png', FIXTURE_SIZE)));
    const put = await putToApp(t, ticket, SVG);
    expect(put.statusCode).toBe(422);
    expect(json(put).error.code).toBe('unsupported_image_type');
    expectImageUrlRefused(await patchMe(user, { imageUrl: ticket.publicUrl }), /No image was uploaded/);
  });
});

describe('dedupe', () => {
  it('the same file twice is one object: the second ticket says alreadyExists, with nothing to PUT', async () => {
    const bytes = png();
    const first = await uploadThroughApi(t, user.accessToken, bytes, 'image/png', FIXTURE_SIZE);
    expect(first.alreadyExists).toBe(false);
    const stored = await objectsOf(dev.id);
    expect(stored).toContain(sha256(bytes));

    const other = await person(t, undefined, 'same-file');
    for (const who of [user, other]) {
      const again = await requestTicket(t, who.accessToken, describeImage(bytes, 'image/png', FIXTURE_SIZE));
      expect(again.statusCode, again.body).toBe(200);
      expect(json(again)).toEqual({ publicUrl: first.publicUrl, alreadyExists: true });
    }
    // A second PUT of the first ticket changes nothing either.
    expect((await putToApp(t, first, bytes)).statusCode).toBe(200);
    expect(await objectsOf(dev.id)).toEqual(stored);

    expect((await patchMe(other, { imageUrl: first.publicUrl })).statusCode).toBe(200);
    expect(json(await me(t, other.accessToken)).user.imageUrl).toBe(first.publicUrl);
  });

  it('the same file in another environment is not reported as existing, and is stored there separately', async () => {
    const bytes = png();
    await uploadThroughApi(t, user.accessToken, bytes, 'image/png', FIXTURE_SIZE);
    const elsewhere = await person(t, t.project.production, 'prod');
    const ticket = await uploadThroughApi(t, elsewhere.accessToken, bytes, 'image/png', FIXTURE_SIZE);
    expect(ticket.alreadyExists).toBe(false);
    expect(ticket.publicUrl).toBe(`${LOCAL}/v1/assets/${t.project.production.id}/${sha256(bytes)}`);
    expect(await objectsOf(t.project.production.id)).toContain(sha256(bytes));
  });
});

describe('organization images: ticket, PUT, PATCH /v1/me/organization, GET /v1/me/organization', () => {
  let owner: Person;
  let admin: Person;
  beforeAll(async () => {
    owner = await person(t, undefined, 'owner');
    admin = await person(t, undefined, 'admin');
  }, 60_000);

  it.each([
    ['an owner', () => owner],
    ['an admin', () => admin],
  ])('%s uploads and saves the image', async (_who, who) => {
    const org = await createOrg(t, owner.userId, { name: 'Pictured' });
    await addMember(t, org.id, admin.userId, 'admin');
    const actor = await actAs(t, who(), org.id);
    const bytes = png();
    const ticket = await uploadThroughApi(t, actor.accessToken, bytes, 'image/png', FIXTURE_SIZE, 'organization_image');
    // Organization images live in the environment's namespace, like avatars.
    expect(ticket.publicUrl).toBe(`${LOCAL}/v1/assets/${dev.id}/${sha256(bytes)}`);

    const patched = await t.call({
      method: 'PATCH',
      url: '/v1/me/organization',
      credential: actor.accessToken,
      payload: { imageUrl: ticket.publicUrl },
    });
    expect(patched.statusCode, patched.body).toBe(200);
    expect(json(patched)).toMatchObject({ id: org.id, imageUrl: ticket.publicUrl });

    const current = await t.call({ method: 'GET', url: '/v1/me/organization', credential: actor.accessToken });
    expect(json(current)).toMatchObject({ id: org.id, imageUrl: ticket.publicUrl });
    expect(json(await me(t, actor.accessToken)).organization.imageUrl).toBe(ticket.publicUrl);
  });

  it('the backend saves an uploaded URL with PATCH /v1/organizations/{id}, under the same rule', async () => {
    const org = await createOrg(t, owner.userId, { name: 'Backend' });
    await actAs(t, owner, org.id);
    const ticket = await uploadThroughApi(t, owner.accessToken, png(), 'image/png', FIXTURE_SIZE, 'organization_image');
    const patch = (imageUrl: string) =>
      t.call({ method: 'PATCH', url: `/v1/organizations/${org.id}`, credential: dev.secretKey, payload: { imageUrl } });
    expect(json(await patch(ticket.publicUrl)).imageUrl).toBe(ticket.publicUrl);
    expectImageUrlRefused(await patch(`${LOCAL}/v1/assets/${dev.id}/${'e'.repeat(64)}`), /No image was uploaded/);
  });
});

describe('which image URLs are saved', () => {
  /** Every write that takes an imageUrl, each answering 2xx when the URL is accepted. */
  function writes(): [string, (imageUrl: string) => Promise<{ statusCode: number; body: string; json(): any }>][] {
    return [
      ['PATCH /v1/me', (imageUrl) => patchMe(user, { imageUrl })],
      [
        'PATCH /v1/users/{id}',
        (imageUrl) => t.call({ method: 'PATCH', url: `/v1/users/${user.userId}`, credential: dev.secretKey, payload: { imageUrl } }),
      ],
      [
        'POST /v1/users',
        (imageUrl) =>
          t.call({ method: 'POST', url: '/v1/users', credential: dev.secretKey, payload: { email: `u${seed++}@example.test`, imageUrl } }),
      ],
      [
        'POST /v1/me/organizations',
        (imageUrl) =>
          t.call({ method: 'POST', url: '/v1/me/organizations', credential: user.accessToken, payload: { name: 'Org', imageUrl } }),
      ],
      [
        'POST /v1/organizations',
        (imageUrl) =>
          t.call({
            method: 'POST',
            url: '/v1/organizations',
            credential: dev.secretKey,
            payload: { name: 'Org', ownerId: user.userId, imageUrl },
          }),
      ],
    ];
  }

  it('an own upload over http on localhost is accepted by every write', async () => {
    const { publicUrl } = await uploadThroughApi(t, user.accessToken, png(), 'image/png', FIXTURE_SIZE);
    expect(publicUrl.startsWith('http://localhost:4000/')).toBe(true);
    for (const [name, write] of writes()) {
      const response = await write(publicUrl);
      expect(response.statusCode, `${name}: ${response.body}`).toBeLessThan(300);
      expect(response.json().imageUrl, name).toBe(publicUrl);
    }
  });

  it.each([
    ['plain http elsewhere', 'http://cdn.example.test/a.png', /https/],
    ['http on localhost that is not an own asset URL', 'http://localhost:4000/v1/me', /https/],
    ['an own asset path on another loopback port', `http://localhost:4001/v1/assets/env_x/${'a'.repeat(64)}`, /https/],
    ['javascript:', 'javascript:alert(1)', /https/],
    ['an own URL that was never uploaded', `${LOCAL}/v1/assets/ENV/${'d'.repeat(64)}`, /No image was uploaded/],
  ])('refuses %s on every write', async (_what, raw, message) => {
    const url = raw.replace('ENV', dev.id);
    for (const [name, write] of writes()) expectImageUrlRefused(await write(url), message, name);
  });

  it("refuses another environment's upload, and a project logo, as this environment's image", async () => {
    const prod = await person(t, t.project.production, 'prod');
    const theirs = await uploadThroughApi(t, prod.accessToken, png(), 'image/png', FIXTURE_SIZE);
    const otherProject = await t.createProject('Other', 'other.test');
    const stranger = await person(t, otherProject.development, 'stranger');
    const foreign = await uploadThroughApi(t, stranger.accessToken, png(), 'image/png', FIXTURE_SIZE);
    const logo = await t.call({
      method: 'PUT',
      url: `/v1/platform/projects/${t.project.id}/logo`,
      credential: t.platformKey,
      headers: { 'content-type': 'image/png' },
      payload: png(),
    });
    expect(logo.statusCode, logo.body).toBe(200);

    for (const url of [theirs.publicUrl, foreign.publicUrl, json(logo).logoUrl]) {
      for (const [name, write] of writes()) expectImageUrlRefused(await write(url), /not an upload of this environment/, `${name} ${url}`);
    }
    // The owner of the production upload may save it.
    expect((await patchMe(prod, { imageUrl: theirs.publicUrl })).statusCode).toBe(200);
  });

  it('accepts any https URL as given', async () => {
    for (const [name, write] of writes()) {
      const response = await write('https://cdn.example.test/pictures/a.webp');
      expect(response.statusCode, `${name}: ${response.body}`).toBeLessThan(300);
    }
  });
});
