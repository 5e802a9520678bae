import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { decodeJwt, GOOD_PASSWORD, json, refresh, signIn, uniqueEmail } from '../helpers/identity.js';
import { actAs, createOrg } from '../helpers/organizations.js';

describe('custom session claims (sessionClaims)', { timeout: 30_000 }, () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  const env = () => t.project.development;
  const setClaims = (sessionClaims: unknown) =>
    t.call({ method: 'PATCH', url: `/v1/platform/environments/${env().id}`, credential: t.platformKey, payload: { sessionClaims } });
  const sk = (method: 'POST' | 'PATCH', url: string, payload: object) => t.call({ method, url, credential: env().secretKey, payload });

  async function userWithPassword(extra: object = {}) {
    const email = uniqueEmail('claims');
    const created = await sk('POST', '/v1/users', { email, password: GOOD_PASSWORD, ...extra });
    expect(created.statusCode, created.body).toBe(201);
    const signedIn = await signIn(t, email, GOOD_PASSWORD);
    expect(signedIn.statusCode, signedIn.body).toBe(200);
    return { id: json(created).id as string, email, session: json(signedIn).session as { accessToken: string; refreshToken: string } };
  }

  it('renders the template into the tokens of sign-in, refresh and organization switches', async () => {
    const template = {
      email: '{{user.email}}',
      plan: '{{user.publicMetadata.plan}}',
      meta: '{{user.publicMetadata}}',
      greeting: 'Hi {{user.firstName}} ({{user.publicMetadata.seats}} seats)',
      app: { verified: '{{user.emailVerified}}', tags: ['static', '{{user.lastName}}'], version: 2 },
      missing: '{{user.publicMetadata.nothing.here}}',
    };
    const saved = await setClaims(template);
    expect(saved.statusCode, saved.body).toBe(200);
    expect(json(saved).sessionClaims).toEqual(template);

    const user = await userWithPassword({ firstName: 'Ada', publicMetadata: { plan: 'pro', seats: 3 }, emailVerified: true });
    const claims = decodeJwt(user.session.accessToken).payload;
    expect(claims).toMatchObject({
      sub: user.id,
      email: user.email,
      plan: 'pro',
      meta: { plan: 'pro', seats: 3 },
      greeting: 'Hi Ada (3 seats)',
      app: { verified: true, tags: ['static', null], version: 2 },
      missing: null,
    });

    // A refresh renders again, so a change of metadata shows in the next token.
    const changed = await sk('PATCH', `/v1/users/${user.id}/metadata`, { publicMetadata: { plan: 'team' } });
    expect(changed.statusCode, changed.body).toBe(200);
    const refreshed = await refresh(t, user.session.refreshToken);
    expect(refreshed.statusCode, refreshed.body).toBe(200);
    const next = json(refreshed).session;
    expect(decodeJwt(next.accessToken).payload).toMatchObject({ sub: user.id, plan: 'team', meta: { plan: 'team', seats: 3 } });

    // Switching organization: the template's claims and the org_* claims together.
    const org = await createOrg(t, user.id, { name: 'Claims Inc' });
    const person = { userId: user.id, email: user.email, accessToken: next.accessToken, refreshToken: next.refreshToken };
    await actAs(t, person, org.id);
    expect(decodeJwt(person.accessToken).payload).toMatchObject({ sub: user.id, plan: 'team', org_id: org.id, org_role: 'owner' });
  });

  it('refuses a bad template when it is saved, with a 400 naming sessionClaims, and keeps the one before', async () => {
    const good = { plan: '{{user.publicMetadata.plan}}' };
    expect((await setClaims(good)).statusCode).toBe(200);
    const bad: [unknown, RegExp][] = [
      [['not', 'an', 'object'], /sessionClaims/],
      [{ who: '{{user.password}}' }, /names no user field/],
      [{ who: '{{session.id}}' }, /not a known placeholder/],
      [{ who: '{{user.firstName.first}}' }, /only publicMetadata has keys/],
      [{ big: 'x'.repeat(1100) }, /over the 1024-byte limit/],
    ];
    for (const [template, message] of bad) {
      const refused = await setClaims(template);
      expect(refused.statusCode, JSON.stringify(template)).toBe(400);
      expect(json(refused).error.code).toBe('invalid_request');
      expect(json(refused).error.message).toMatch(message);
      expect(json(refused).error.details?.fields).toEqual(['sessionClaims']);
    }
    const current = await t.call({ method: 'GET', url: `/v1/platform/environments/${env().id}`, credential: t.platformKey });
    expect(json(current).sessionClaims).toEqual(good);
  });

  it('null removes the claims; a template without placeholders needs no user read and still renders', async () => {
    expect((await setClaims({ tenant: 'acme', flags: [1, 2] })).statusCode).toBe(200);
    const withStatic = await userWithPassword();
    expect(decodeJwt(withStatic.session.accessToken).payload).toMatchObject({ tenant: 'acme', flags: [1, 2] });
    const cleared = await setClaims(null);
    expect(cleared.statusCode).toBe(200);
    expect(json(cleared).sessionClaims).toBeNull();
    const plain = await userWithPassword();
    const payload = decodeJwt(plain.session.accessToken).payload;
    expect(payload.tenant).toBeUndefined();
    expect(Object.keys(payload).sort()).toEqual(['amr', 'exp', 'fva', 'iat', 'iss', 'jti', 'nbf', 'sid', 'sub']);
  });
});
