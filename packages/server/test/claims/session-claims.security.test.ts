import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { BASE_URL } from '../helpers/app.js';
import { decodeJwt, GOOD_PASSWORD, json, refresh, signIn, uniqueEmail } from '../helpers/identity.js';
import { actAs, createOrg } from '../helpers/organizations.js';

describe('custom session claims: attacks', { timeout: 30_000 }, () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  const env = () => t.project.development;
  const setClaims = (sessionClaims: unknown) =>
    t.call({ method: 'PATCH', url: `/v1/platform/environments/${env().id}`, credential: t.platformKey, payload: { sessionClaims } });

  async function userWithPassword(extra: object = {}) {
    const email = uniqueEmail('claims-attack');
    const created = await t.call({
      method: 'POST',
      url: '/v1/users',
      credential: env().secretKey,
      payload: { email, password: GOOD_PASSWORD, ...extra },
    });
    expect(created.statusCode, created.body).toBe(201);
    const signedIn = await signIn(t, email, GOOD_PASSWORD);
    expect(signedIn.statusCode, signedIn.body).toBe(200);
    return { id: json(created).id as string, email, session: json(signedIn).session as { accessToken: string; refreshToken: string } };
  }

  it('a template that tries to override sub, iss, sid, exp, azp or org_* claims is refused when saved', async () => {
    for (const name of [
      'sub',
      'iss',
      'sid',
      'exp',
      'iat',
      'nbf',
      'jti',
      'azp',
      'aud',
      'org_id',
      'org_role',
      'org_permissions',
      'org_anything',
    ]) {
      const refused = await setClaims({ [name]: 'user_forged', ok: 'x' });
      expect(refused.statusCode, name).toBe(400);
      expect(json(refused).error.message).toContain(`"${name}"`);
    }
  });

  it('prototype pollution and stack exhaustion: __proto__-like names and a 200,000-deep template are refused with a 400', async () => {
    for (const sessionClaims of [{ constructor: 'x' }, { app: { prototype: { admin: true } } }]) {
      const refused = await setClaims(sessionClaims);
      expect(refused.statusCode, refused.body).toBe(400);
      expect(json(refused).error.details).toEqual({ fields: ['sessionClaims'] });
    }
    const raw = (body: string) =>
      t.call({
        method: 'PATCH',
        url: `/v1/platform/environments/${env().id}`,
        credential: t.platformKey,
        headers: { 'content-type': 'application/json' },
        payload: body,
      });
    const proto = await raw('{"sessionClaims":{"__proto__":{"admin":true}}}');
    expect(proto.statusCode, proto.body).toBe(400);
    const deep = await raw(`{"sessionClaims":{"a":${'['.repeat(200_000)}${']'.repeat(200_000)}}}`);
    expect(deep.statusCode, deep.body.slice(0, 300)).toBe(400);
    expect(json(deep).error.code).toBe('invalid_request');
  });

  it('privateMetadata (hidden from the user) and unsafeMetadata (written by the user) cannot be templated', async () => {
    for (const placeholder of [
      '{{user.privateMetadata}}',
      '{{user.privateMetadata.stripe}}',
      '{{user.unsafeMetadata.role}}',
      'x {{user.unsafeMetadata}}',
    ]) {
      const refused = await setClaims({ role: placeholder });
      expect(refused.statusCode, placeholder).toBe(400);
      expect(json(refused).error.message).toMatch(/privateMetadata|unsafeMetadata/);
    }
  });

  it('what the user writes cannot escalate: unsafeMetadata and profile text never become claims or placeholders', async () => {
    expect((await setClaims({ role: '{{user.publicMetadata.role}}', name: '{{user.firstName}}' })).statusCode).toBe(200);
    const user = await userWithPassword({ publicMetadata: { role: 'viewer' } });
    // The user writes their own unsafe metadata and names, shaped like claims and placeholders.
    const patched = await t.call({
      method: 'PATCH',
      url: '/v1/me',
      credential: user.session.accessToken,
      payload: {
        firstName: '{{user.publicMetadata}}',
        unsafeMetadata: { role: 'admin', sub: 'user_forged', org_role: 'owner', publicMetadata: { role: 'admin' } },
      },
    });
    expect(patched.statusCode, patched.body).toBe(200);
    const next = await refresh(t, user.session.refreshToken);
    const claims = decodeJwt(json(next).session.accessToken).payload;
    expect(claims.sub).toBe(user.id);
    expect(claims.role).toBe('viewer');
    expect(claims.name).toBe('{{user.publicMetadata}}'); // rendered once: a value is never a template
    expect(claims.org_role).toBeUndefined();
  });

  it('metadata shaped like registered claims stays nested, and org claims come from the live membership', async () => {
    expect((await setClaims({ meta: '{{user.publicMetadata}}' })).statusCode).toBe(200);
    const user = await userWithPassword({ publicMetadata: { sub: 'user_forged', iss: 'https://evil.test', org_id: 'org_forged' } });
    const claims = decodeJwt(user.session.accessToken).payload;
    expect(claims.sub).toBe(user.id);
    expect(claims.iss).toBe(`${BASE_URL}/v1/environments/${env().id}`);
    expect(claims.org_id).toBeUndefined();
    expect(claims.meta).toEqual({ sub: 'user_forged', iss: 'https://evil.test', org_id: 'org_forged' });
    const org = await createOrg(t, user.id, { name: 'Real Org' });
    const person = { userId: user.id, email: user.email, ...user.session };
    await actAs(t, person, org.id);
    expect(decodeJwt(person.accessToken).payload).toMatchObject({ sub: user.id, org_id: org.id, meta: { org_id: 'org_forged' } });
  });

  it('a rendering over 1 KiB never fails a sign-in or refresh: that token carries no custom claims', async () => {
    expect((await setClaims({ bio: '{{user.publicMetadata.bio}}', plan: 'static' })).statusCode).toBe(200);
    const user = await userWithPassword({ publicMetadata: { bio: 'b'.repeat(2000) } });
    const claims = decodeJwt(user.session.accessToken).payload;
    expect(claims.sub).toBe(user.id);
    expect(claims.bio).toBeUndefined();
    expect(claims.plan).toBeUndefined(); // left out whole, never cut
    const again = await refresh(t, user.session.refreshToken);
    expect(again.statusCode, again.body).toBe(200);
    expect(decodeJwt(json(again).session.accessToken).payload.bio).toBeUndefined();
    // Small again: the claims come back.
    await t.call({
      method: 'PATCH',
      url: `/v1/users/${user.id}/metadata`,
      credential: env().secretKey,
      payload: { publicMetadata: { bio: 'short' } },
    });
    const small = await refresh(t, json(again).session.refreshToken);
    expect(decodeJwt(json(small).session.accessToken).payload).toMatchObject({ bio: 'short', plan: 'static' });
  });
});
