import { enableTotp } from '../helpers/mfa.js';
import { enablePasskeys, LOCAL_ORIGIN, registerPasskey, signInWithPasskey } from '../helpers/passkeys.js';
import { SoftAuthenticator } from '../helpers/webauthn.js';
import { startTestIdp } from '../helpers/saml-idp.js';
import { testEnvironmentId } from '../helpers/ids.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newSecret } from '../../src/lib/crypto.js';
import { ENVIRONMENT_DATA_TABLES } from '../../src/tenancy/queries.js';
import { tablesOf, testDb } from '../helpers/store.js';
import { startTestApp, type TestApp, type TestProject } from '../helpers/app.js';
import { json, me, signUp, uniqueEmail } from '../helpers/identity.js';
import { REDIS_SUITE, REDIS_URL } from '../helpers/redis.js';
import { startRelayedNodes, type RelayedNodes } from '../helpers/relay.js';
import { within } from '../helpers/wait.js';

function platformCall(t: TestApp, platformKey = t.platformKey) {
  return (method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, payload?: object) =>
    t.call({ method, url, credential: platformKey, ...(payload ? { payload } : {}) });
}

/** Puts a row in every table of the environment's data: users, sessions, keys, organizations, roles, flows, outbox, usage. */
/** One SAML IdP for every fill: its key generation is slow on a busy machine. */
let testIdp: ReturnType<typeof startTestIdp> | undefined;

async function fill(t: TestApp, project: TestProject) {
  const env = project.development;
  const endpoint = await t.call({
    method: 'POST',
    url: `/v1/platform/environments/${env.id}/webhook-endpoints`,
    credential: t.platformKey,
    payload: { url: 'http://127.0.0.1:9/hook' },
  });
  expect(endpoint.statusCode, endpoint.body).toBe(201);
  const user = await signUp(t, { environment: env });
  // TOTP and its backup codes (user_totp, user_backup_codes rows).
  await enableTotp(t, user.accessToken);
  // A passkey (passkeys, passkey_user_handles) and an answered passkey sign-in (passkey_challenges).
  await enablePasskeys(t, env);
  const authenticator = new SoftAuthenticator(LOCAL_ORIGIN);
  const passkey = await registerPasskey(t, user.accessToken, authenticator);
  expect(passkey.statusCode, passkey.body).toBe(201);
  const passkeySignIn = await signInWithPasskey(t, authenticator, env);
  expect(passkeySignIn.statusCode, passkeySignIn.body).toBe(200);
  // An actor token not yet redeemed (actor_tokens).
  const actorToken = await t.call({ method: 'POST', url: '/v1/actor-tokens', credential: env.secretKey, payload: { userId: user.userId, actor: { sub: 'support:doomed' } } });
  expect(actorToken.statusCode, actorToken.body).toBe(201);
  // A sign-in waiting for its second factor (a sign_in_attempts row).
  const waiting = await t.call({ method: 'POST', url: '/v1/auth/signin', credential: env.publishableKey, payload: { email: user.email, password: 'correct horse battery staple' } });
  expect(waiting.statusCode, waiting.body).toBe(202);
  const organization = await t.call({
    method: 'POST',
    url: '/v1/organizations',
    credential: env.secretKey,
    payload: { name: 'Doomed', ownerId: user.userId },
  });
  expect(organization.statusCode, organization.body).toBe(201);
  const orgId = organization.json().id;
  // An API key (api_keys) and a machine (machines).
  const apiKey = await t.call({ method: 'POST', url: '/v1/api-keys', credential: env.secretKey, payload: { subject: orgId, name: 'doomed' } });
  expect(apiKey.statusCode, apiKey.body).toBe(201);
  const machine = await t.call({ method: 'POST', url: `/v1/platform/environments/${env.id}/machines`, credential: t.platformKey, payload: { name: 'doomed' } });
  expect(machine.statusCode, machine.body).toBe(201);
  const domain = `doomed-${Date.now().toString(36)}.example`;
  for (const [url, payload] of [
    [`/v1/organizations/${orgId}/invitations`, { email: 'invitee@example.test', role: 'member' }],
    [`/v1/organizations/${orgId}/domains`, { name: domain, enrollmentMode: 'automatic_suggestion' }],
  ] as const) {
    const res = await t.call({ method: 'POST', url, credential: env.secretKey, payload });
    expect(res.statusCode, res.body).toBe(201);
  }
  // A user who proves an address at the domain gets a suggestion (a membership request row).
  const user2 = await t.call({
    method: 'POST',
    url: '/v1/users',
    credential: env.secretKey,
    payload: { email: `x@${domain}`, emailVerified: true },
  });
  await t.call({ method: 'POST', url: '/v1/auth/email-code', credential: env.publishableKey, payload: { email: `x@${domain}` } });
  const mail = await t.call({ method: 'GET', url: `/v1/dev/emails?to=${encodeURIComponent(`x@${domain}`)}`, credential: env.secretKey });
  const domainCode = /^(\d{6})$/m.exec(mail.json().data[0].text)![1];
  const signedIn = await t.call({
    method: 'POST',
    url: '/v1/auth/email-code/verify',
    credential: env.publishableKey,
    payload: { email: `x@${domain}`, code: domainCode },
  });
  expect(signedIn.statusCode, signedIn.body).toBe(200);
  expect(user2.statusCode).toBe(201);
  // A verified sign-up waiting for its code (a sign_up_attempts row).
  await t.call({
    method: 'PATCH',
    url: `/v1/platform/environments/${env.id}`,
    credential: t.platformKey,
    payload: { emailVerification: 'required' },
  });
  const pending = await t.call({
    method: 'POST',
    url: '/v1/auth/signup',
    credential: env.publishableKey,
    payload: { email: 'pending@example.test', password: 'correct horse battery staple' },
  });
  expect(pending.statusCode, pending.body).toBe(202);
  await t.call({
    method: 'PATCH',
    url: `/v1/platform/environments/${env.id}`,
    credential: t.platformKey,
    payload: { emailVerification: 'off' },
  });
  const role = await t.call({
    method: 'POST',
    url: `/v1/platform/environments/${env.id}/roles`,
    credential: t.platformKey,
    payload: { key: 'auditor', name: 'Auditor', permissions: [] },
  });
  expect(role.statusCode, role.body).toBe(201);
  const code = await t.call({
    method: 'POST',
    url: '/v1/auth/email-code',
    credential: env.publishableKey,
    payload: { email: user.email },
  });
  expect(code.statusCode, code.body).toBe(202);
  const handoff = await t.call({
    method: 'POST',
    url: '/v1/me/handoff',
    credential: user.accessToken,
    payload: { redirectUrl: 'http://localhost:5173/' },
  });
  expect(handoff.statusCode, handoff.body).toBe(200);
  // An SSO connection, with an IdP-initiated sign-in linking the already verified x@domain (a first proof of an address would revoke the unverified user's sessions): a connection, identity, attempt and seen assertion.
  const idp = await (testIdp ??= startTestIdp());
  const saml = await t.call({
    method: 'POST',
    url: `/v1/platform/environments/${env.id}/sso-connections`,
    credential: t.platformKey,
    payload: { type: 'saml', name: 'Doomed IdP', domains: [domain], idpMetadataXml: idp.metadataXml, allowIdpInitiated: true, idpInitiatedRedirectUrl: 'http://localhost:3000/done' },
  });
  expect(saml.statusCode, saml.body).toBe(201);
  const { acsUrl, spEntityId } = JSON.parse(saml.body) as { acsUrl: string; spEntityId: string };
  const acs = await t.call({
    method: 'POST',
    url: new URL(acsUrl).pathname,
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    payload: new URLSearchParams({ SAMLResponse: await idp.issue({ spEntityId, acsUrl }, { nameId: `x@${domain}` }) }).toString(),
  });
  expect(new URL(String(acs.headers.location)).searchParams.get('token'), acs.body).toBeTruthy();
  // Webhook events fanned out into delivery attempts (to a closed port: they fail and wait to retry).
  await t.app.webhooks.drain();
  return user;
}

/** Rows of each table that has an environment_id column, for these environments. */
async function rowsPerTable(t: TestApp, environmentIds: string[]): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (const table of await tablesOf(t.store)) {
    if (!table.columns.some((c) => c.name === 'environment_id')) continue;
    const row = await t.store.db
      .selectFrom(table.name as 'users')
      .select((eb) => eb.fn.countAll<number | string>().as('n'))
      .where('environment_id', 'in', environmentIds.map(testEnvironmentId))
      .executeTakeFirstOrThrow();
    counts[table.name] = Number(row.n);
  }
  return counts;
}

describe('renaming and deleting projects', () => {
  let t: TestApp;
  let platform: ReturnType<typeof platformCall>;
  beforeAll(async () => {
    t = await startTestApp();
    platform = platformCall(t);
  });
  afterAll(() => t.close());

  it('renames a project and sets the domain of both its environments', async () => {
    const project = await t.createProject('Before', 'before.test');
    const renamed = await platform('PATCH', `/v1/platform/projects/${project.id}`, { name: 'After' });
    expect(renamed.statusCode, renamed.body).toBe(200);
    expect(renamed.json()).toMatchObject({ id: project.id, name: 'After' });
    expect(renamed.json().environments.map((e: { domain: string }) => e.domain)).toEqual(['before.test', 'before.test']);
    expect((await platform('GET', `/v1/platform/projects/${project.id}`)).json().name).toBe('After');

    const fromOrigin = (origin: string) =>
      t.call({ method: 'GET', url: '/v1/environment', credential: project.production.publishableKey, headers: { origin } });
    expect((await fromOrigin('https://app.before.test')).statusCode).toBe(200); // now cached

    const moved = await platform('PATCH', `/v1/platform/projects/${project.id}`, { domain: 'After.Test' });
    expect(moved.statusCode, moved.body).toBe(200);
    expect(moved.json().name).toBe('After');
    expect(moved.json().environments.map((e: { domain: string }) => e.domain)).toEqual(['after.test', 'after.test']);
    // The origin lock follows the new domain at once (the cached environment was dropped).
    expect((await fromOrigin('https://app.after.test')).statusCode).toBe(200);
    expect((await fromOrigin('https://app.before.test')).statusCode).toBe(403);

    const cleared = await platform('PATCH', `/v1/platform/projects/${project.id}`, { domain: null });
    expect(cleared.json().environments.map((e: { domain: string | null }) => e.domain)).toEqual([null, null]);
  });

  it.each([
    [{ name: '' }, 'name'],
    [{ name: 'x'.repeat(201) }, 'name'],
    [{ name: 7 }, 'name'],
    [{ domain: 'https://acme.test' }, 'domain'],
    [{ domain: 'localhost' }, 'domain'],
    [{ owner: 'someone' }, 'owner'],
  ])('refuses the change %j in the error shape', async (patch, field) => {
    const res = await platform('PATCH', `/v1/platform/projects/${t.project.id}`, patch);
    expect(res.statusCode, res.body).toBe(400);
    expect(res.json().error).toMatchObject({ code: 'invalid_request', message: expect.any(String) });
    expect(JSON.stringify(res.json().error.details.fields)).toContain(field);
  });

  it('answers 404 in the error shape for an unknown project', async () => {
    for (const res of [
      await platform('PATCH', '/v1/platform/projects/proj_nope', { name: 'X' }),
      await platform('DELETE', '/v1/platform/projects/proj_nope'),
    ]) {
      expect(res.statusCode, res.body).toBe(404);
      expect(res.json().error).toMatchObject({ code: 'not_found', message: expect.stringContaining('proj_nope') });
    }
  });

  it('takes only the platform key', async () => {
    const res = await t.call({
      method: 'DELETE',
      url: `/v1/platform/projects/${t.project.id}`,
      credential: t.project.development.secretKey,
    });
    expect(res.statusCode).toBe(403);
    expect(res.json().error.code).toBe('credential_not_accepted');
  });

  it('deletes a project with all its data; its keys and tokens answer 401 at once; other projects are untouched', async () => {
    const doomed = await t.createProject('Doomed', 'doomed.test');
    const kept = await t.createProject('Kept', 'kept.test');
    const doomedUser = await fill(t, doomed);
    const keptUser = await fill(t, kept);
    const doomedIds = [doomed.development.id, doomed.production.id];

    // Warm every cache: keys, environment, session.
    for (let i = 0; i < 2; i++) {
      expect((await t.call({ method: 'GET', url: '/v1/environment', credential: doomed.development.publishableKey })).statusCode).toBe(200);
      expect((await t.call({ method: 'GET', url: '/v1/users', credential: doomed.development.secretKey })).statusCode).toBe(200);
      const meAnswer = await me(t, doomedUser.accessToken);
      expect(meAnswer.statusCode, meAnswer.body).toBe(200);
    }
    const keptIds = [kept.development.id, kept.production.id];
    const keptBefore = await rowsPerTable(t, keptIds);
    const before = await rowsPerTable(t, doomedIds);
    for (const table of ENVIRONMENT_DATA_TABLES) expect(before[table], `${table} has rows to delete`).toBeGreaterThan(0);

    const deleted = await platform('DELETE', `/v1/platform/projects/${doomed.id}`);
    expect(deleted.statusCode, deleted.body).toBe(204);
    expect(deleted.body).toBe('');

    for (const credential of [doomed.development.publishableKey, doomed.production.publishableKey]) {
      const res = await t.call({ method: 'GET', url: '/v1/environment', credential });
      expect(res.statusCode).toBe(401);
      expect(res.json().error.code).toBe('unauthenticated');
    }
    for (const credential of [doomed.development.secretKey, doomed.production.secretKey]) {
      expect((await t.call({ method: 'GET', url: '/v1/users', credential })).statusCode).toBe(401);
    }
    expect((await me(t, doomedUser.accessToken)).statusCode).toBe(401);
    expect((await platform('GET', `/v1/platform/projects/${doomed.id}`)).statusCode).toBe(404);
    expect((await platform('GET', `/v1/platform/environments/${doomed.development.id}`)).statusCode).toBe(404);
    expect((await platform('DELETE', `/v1/platform/projects/${doomed.id}`)).statusCode).toBe(404);

    const after = await rowsPerTable(t, doomedIds);
    expect(
      Object.values(after).every((n) => n === 0),
      JSON.stringify(after),
    ).toBe(true);
    const [projects, environments] = await Promise.all([
      t.store.db.selectFrom('projects').select('id').where('id', '=', doomed.id).execute(),
      t.store.db.selectFrom('environments').select('id').where('project_id', '=', doomed.id).execute(),
    ]);
    expect([projects, environments]).toEqual([[], []]);

    // The other project keeps everything.
    expect(await rowsPerTable(t, keptIds)).toEqual(keptBefore);
    expect(json(await me(t, keptUser.accessToken)).user.id).toBe(keptUser.userId);
    expect((await t.call({ method: 'GET', url: '/v1/users', credential: kept.development.secretKey })).json().data).toHaveLength(2);
    expect((await platform('GET', `/v1/platform/projects/${kept.id}`)).json().name).toBe('Kept');
    const signUpAgain = await signUp(t, { environment: kept.development, email: uniqueEmail('kept') });
    expect(signUpAgain.userId).toMatch(/^user_/);
  }, 60_000); // two fills: sign-ups hash passwords and the SAML IdP makes a key; slow on a busy machine

  it('names every table that holds environment data, so none is left behind', async () => {
    const tables = Object.keys(await rowsPerTable(t, ['env_none']));
    // SQLite's user search index (migration 0010) is emptied by the users' delete trigger, and the
    // test above counts it among the tables left empty.
    const searchIndex = testDb() === 'sqlite' ? ['users_search'] : [];
    expect([...tables, 'environments'].sort()).toEqual([...ENVIRONMENT_DATA_TABLES, ...searchIndex, 'environments'].sort());
  });
});

describe.skipIf(!REDIS_URL)(`deleting a project, across nodes ${REDIS_SUITE}`, () => {
  const platformKey = newSecret('plk_');
  const instanceSecret = newSecret('', 48);
  let nodes: RelayedNodes;
  beforeAll(async () => {
    nodes = await startRelayedNodes({ platformKey, instanceSecret, cache: { ttlMs: 600_000 } });
  });
  afterAll(() => nodes?.close());

  it('a project deleted on one node stops its keys and sessions on the others as soon as the change arrives', async () => {
    const { a, b, deaf } = nodes;
    const doomed = await a.createProject('Doomed across nodes');
    const user = await signUp(a, { environment: doomed.development });
    const pk = (node: TestApp) => node.call({ method: 'GET', url: '/v1/environment', credential: doomed.development.publishableKey });
    const sk = (node: TestApp) => node.call({ method: 'GET', url: '/v1/users', credential: doomed.development.secretKey });
    for (const node of [a, b, deaf]) {
      for (let i = 0; i < 2; i++) {
        expect((await pk(node)).statusCode).toBe(200);
        expect((await sk(node)).statusCode).toBe(200);
        expect((await me(node, user.accessToken)).statusCode).toBe(200);
      }
    }
    expect((await platformCall(a, platformKey)('DELETE', `/v1/platform/projects/${doomed.id}`)).statusCode).toBe(204);
    expect((await pk(a)).statusCode).toBe(401);
    await within(1000, async () => (await pk(b)).statusCode === 401);
    expect((await sk(b)).statusCode).toBe(401);
    expect((await me(b, user.accessToken)).statusCode).toBe(401);
    // The node that missed the announcement still trusts its cache: B heard it through Redis.
    expect((await pk(deaf)).statusCode).toBe(200);
  });
});
