import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { decodeJwt, json, refresh } from '../helpers/identity.js';
import { actAs, addMember, createOrg, person, plainUser, rolesOf, type Person } from '../helpers/organizations.js';

describe('/v1/platform/environments/{id}/roles and custom roles', { timeout: 30_000 }, () => {
  let t: TestApp;
  let env: string;
  let owner: Person;
  let manager: Person;
  beforeAll(async () => {
    t = await startTestApp();
    env = t.project.development.id;
    owner = await person(t, undefined, 'owner');
    manager = await person(t, undefined, 'manager');
  }, 60_000); // signing people up hashes passwords: slow on a busy machine
  afterAll(() => t.close());

  const platform = (
    method: 'GET' | 'POST' | 'PATCH' | 'DELETE',
    url: string,
    payload?: Record<string, unknown>,
    credential = t.platformKey,
  ) => t.call({ method, url, credential, ...(payload === undefined ? {} : { payload }) });

  it('lists the system roles with their permissions', async () => {
    const response = await platform('GET', `/v1/platform/environments/${env}/roles`);
    expect(response.statusCode).toBe(200);
    const system = json(response).data.filter((r: { system: boolean }) => r.system);
    expect(system.map((r: { key: string; permissions: string[] }) => [r.key, r.permissions])).toEqual([
      ['owner', ['org:manage', 'org:members:manage', 'org:delete']],
      ['admin', ['org:manage', 'org:members:manage']],
      ['member', []],
    ]);
  });

  it('creates, changes and deletes a custom role; validates keys and permissions', async () => {
    const created = await platform('POST', `/v1/platform/environments/${env}/roles`, {
      key: 'billing',
      name: 'Billing manager',
      description: 'Reads and pays invoices',
      permissions: ['org:billing:read', 'org:billing:manage', 'org:billing:read'],
    });
    expect(created.statusCode).toBe(201);
    expect(json(created)).toEqual({
      key: 'billing',
      name: 'Billing manager',
      description: 'Reads and pays invoices',
      permissions: ['org:billing:read', 'org:billing:manage'],
      system: false,
      createdAt: expect.any(Number),
      updatedAt: expect.any(Number),
    });
    expect(
      (await platform('POST', `/v1/platform/environments/${env}/roles`, { key: 'billing', name: 'Again', permissions: [] })).statusCode,
    ).toBe(409);
    expect(
      (await platform('POST', `/v1/platform/environments/${env}/roles`, { key: 'admin', name: 'Mine', permissions: [] })).statusCode,
    ).toBe(409);
    for (const permissions of [['billing:read'], ['org:Billing:read'], ['org:billing'], ['org:a:b:c'], ['org:billing:read ']]) {
      const refused = await platform('POST', `/v1/platform/environments/${env}/roles`, { key: 'bad', name: 'Bad', permissions });
      expect(refused.statusCode, JSON.stringify(permissions)).toBe(400);
      expect(json(refused).error.details).toEqual({ fields: ['permissions'] });
    }
    for (const key of ['Billing', '1st', 'with space', 'x', 'trailing-']) {
      expect(
        (await platform('POST', `/v1/platform/environments/${env}/roles`, { key, name: 'Bad', permissions: [] })).statusCode,
        key,
      ).toBe(400);
    }

    const patched = await platform('PATCH', `/v1/platform/environments/${env}/roles/billing`, { permissions: ['org:billing:read'] });
    expect(patched.statusCode).toBe(200);
    expect(json(patched)).toMatchObject({ key: 'billing', name: 'Billing manager', permissions: ['org:billing:read'] });
    expect((await platform('PATCH', `/v1/platform/environments/${env}/roles/owner`, { name: 'Boss' })).statusCode).toBe(403);
    expect((await platform('DELETE', `/v1/platform/environments/${env}/roles/member`)).statusCode).toBe(403);
    expect((await platform('PATCH', `/v1/platform/environments/${env}/roles/nope`, { name: 'x' })).statusCode).toBe(404);

    const keys = json(await platform('GET', `/v1/platform/environments/${env}/roles`)).data.map((r: { key: string }) => r.key);
    expect(keys).toEqual(['owner', 'admin', 'member', 'billing']);
    // Roles are per environment.
    const prodKeys = json(await platform('GET', `/v1/platform/environments/${t.project.production.id}/roles`)).data.map(
      (r: { key: string }) => r.key,
    );
    expect(prodKeys).toEqual(['owner', 'admin', 'member']);

    expect((await platform('DELETE', `/v1/platform/environments/${env}/roles/billing`)).statusCode).toBe(204);
    expect((await platform('DELETE', `/v1/platform/environments/${env}/roles/billing`)).statusCode).toBe(404);
    expect((await platform('GET', '/v1/platform/environments/env_unknown/roles')).statusCode).toBe(404);
    expect((await platform('GET', `/v1/platform/environments/${env}/roles`, undefined, t.project.development.secretKey)).statusCode).toBe(
      403,
    );
  });

  it('assigns custom roles whose live permissions authorize, and whose claims follow', async () => {
    await platform('POST', `/v1/platform/environments/${env}/roles`, {
      key: 'people_ops',
      name: 'People ops',
      permissions: ['org:members:manage', 'org:reports:read'],
    });
    const org = await createOrg(t, owner.userId, { name: 'Custom' });
    await addMember(t, org.id, manager.userId, 'people_ops');
    await actAs(t, manager, org.id);
    expect(decodeJwt(manager.accessToken).payload).toMatchObject({
      org_role: 'people_ops',
      org_permissions: ['org:members:manage', 'org:reports:read'],
    });

    const recruit = await plainUser(t);
    const added = await t.call({
      method: 'POST',
      url: '/v1/me/organization/members',
      credential: manager.accessToken,
      payload: { email: recruit.email, role: 'people_ops' },
    });
    expect(added.statusCode).toBe(201);
    // It holds org:members:manage but is not owner: owners stay out of reach.
    const promote = await t.call({
      method: 'PATCH',
      url: `/v1/me/organization/members/${recruit.id}`,
      credential: manager.accessToken,
      payload: { role: 'owner' },
    });
    expect(promote.statusCode).toBe(403);
    // No org:manage: renaming is refused.
    const rename = await t.call({ method: 'PATCH', url: '/v1/me/organization', credential: manager.accessToken, payload: { name: 'X' } });
    expect(rename.statusCode).toBe(403);

    // A role in use cannot be deleted.
    const inUse = await platform('DELETE', `/v1/platform/environments/${env}/roles/people_ops`);
    expect(inUse.statusCode).toBe(409);
    expect(json(inUse).error.message).toMatch(/held by 2 memberships/);

    // Changing the role's permissions takes effect at once, whatever the token says.
    await platform('PATCH', `/v1/platform/environments/${env}/roles/people_ops`, { permissions: ['org:reports:read'] });
    const other = await plainUser(t);
    const refused = await t.call({
      method: 'POST',
      url: '/v1/me/organization/members',
      credential: manager.accessToken,
      payload: { email: other.email },
    });
    expect(refused.statusCode).toBe(403);
    const next = json(await refresh(t, manager.refreshToken)).session.accessToken;
    expect(decodeJwt(next).payload.org_permissions).toEqual(['org:reports:read']);

    // A custom role of another environment is unknown here.
    await platform('POST', `/v1/platform/environments/${t.project.production.id}/roles`, {
      key: 'prod_only',
      name: 'Prod only',
      permissions: [],
    });
    const foreign = await t.call({
      method: 'PATCH',
      url: `/v1/organizations/${org.id}/members/${recruit.id}`,
      credential: t.project.development.secretKey,
      payload: { role: 'prod_only' },
    });
    expect(foreign.statusCode).toBe(400);
    expect(json(foreign).error.message).toMatch(/Unknown role "prod_only"[\s\S]*people_ops/);
    expect((await rolesOf(t, org.id))[recruit.id]).toBe('people_ops');
  });
  it('a non-owner cannot hand out, change or remove a custom role carrying system permissions they lack', async () => {
    await platform('POST', `/v1/platform/environments/${env}/roles`, {
      key: 'closer',
      name: 'Closer',
      permissions: ['org:delete'],
    });
    const org = await createOrg(t, owner.userId, { name: 'Escalation' });
    const admin = await person(t, undefined, 'admin');
    await addMember(t, org.id, admin.userId, 'admin');
    const target = await plainUser(t);
    await addMember(t, org.id, target.id, 'member');
    await actAs(t, owner, org.id);
    await actAs(t, admin, org.id);
    const as = (who: Person, method: 'POST' | 'PATCH' | 'DELETE', url: string, payload?: Record<string, unknown>) =>
      t.call({ method, url, credential: who.accessToken, ...(payload === undefined ? {} : { payload }) });

    for (const response of [
      await as(admin, 'PATCH', `/v1/me/organization/members/${target.id}`, { role: 'closer' }),
      await as(admin, 'PATCH', `/v1/me/organization/members/${admin.userId}`, { role: 'closer' }),
      await as(admin, 'POST', '/v1/me/organization/members', { email: (await plainUser(t)).email, role: 'closer' }),
    ]) {
      expect(response.statusCode, response.body).toBe(403);
      expect(json(response).error.message).toMatch(/org:delete/);
    }
    expect((await as(owner, 'PATCH', `/v1/me/organization/members/${target.id}`, { role: 'closer' })).statusCode).toBe(200);
    expect((await as(admin, 'PATCH', `/v1/me/organization/members/${target.id}`, { role: 'member' })).statusCode).toBe(403);
    expect((await as(admin, 'DELETE', `/v1/me/organization/members/${target.id}`)).statusCode).toBe(403);
    expect((await rolesOf(t, org.id))[target.id]).toBe('closer');
    expect((await as(owner, 'DELETE', `/v1/me/organization/members/${target.id}`)).statusCode).toBe(200);
  });
});
