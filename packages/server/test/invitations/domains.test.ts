import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, testClock, type TestApp } from '../helpers/app.js';
import { codeFrom, outbox, REDIRECT, start, tokenFrom } from '../helpers/flows.js';
import { json, signUp } from '../helpers/identity.js';
import { actAs, addMember, createOrg, person, plainUser } from '../helpers/organizations.js';
import { DomainService } from '../../src/invitations/domain-service.js';
import { OrganizationAccess } from '../../src/organizations/access.js';
import { SignInThrottle } from '../../src/ratelimit/throttle.js';

let domainCounter = 0;
function uniqueDomain(): string {
  domainCounter += 1;
  return `corp${domainCounter}-${Date.now().toString(36)}.example`;
}

describe('verified domains and membership requests', () => {
  const clock = testClock();
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ now: clock.now });
  });
  afterAll(() => t.close());

  const sk = (method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, payload?: object) =>
    t.call({ method, url, credential: t.project.development.secretKey, ...(payload ? { payload } : {}) });
  const as = (who: { accessToken: string }, method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, payload?: object) =>
    t.call({ method, url, credential: who.accessToken, ...(payload ? { payload } : {}) });

  /** Signs up by magic link, which proves the address; returns the session's access token. */
  async function verifiedSignUp(email: string): Promise<{ accessToken: string; userId: string }> {
    await start(t, 'magic-link', { email, redirectUrl: REDIRECT });
    const res = await start(t, 'magic-link/verify', { token: tokenFrom((await outbox(t, email))[0]!) });
    expect(res.statusCode, res.body).toBe(200);
    return { accessToken: json(res).session.accessToken, userId: json(res).user.id };
  }

  async function orgWithDomain(enrollmentMode: string) {
    const owner = await plainUser(t, undefined, 'owner');
    const org = await createOrg(t, owner.id, { name: 'Globex' });
    const name = uniqueDomain();
    const created = await sk('POST', `/v1/organizations/${org.id}/domains`, { name: name.toUpperCase(), enrollmentMode });
    expect(created.statusCode, created.body).toBe(201);
    expect(json(created)).toEqual({
      id: expect.stringMatching(/^orgdom_/),
      organizationId: org.id,
      name,
      enrollmentMode,
      verified: true,
      createdAt: clock.now(),
      updatedAt: clock.now(),
    });
    return { org, name, domain: json(created) };
  }

  it('automatic_invitation: a user who proves an address at the domain finds a pending invitation as member, and accepts it', async () => {
    const { org, name } = await orgWithDomain('automatic_invitation');
    const user = await verifiedSignUp(`ada@${name}`);
    const invitations = json(await as(user, 'GET', '/v1/me/invitations')).data;
    expect(invitations).toEqual([
      expect.objectContaining({
        organizationId: org.id,
        role: 'member',
        status: 'pending',
        organization: expect.objectContaining({ name: 'Globex' }),
      }),
    ]);
    // Nothing was emailed for it: the user sees it in the product.
    expect((await outbox(t, `ada@${name}`)).map((m) => m.kind)).toEqual(['sign_up_link']);
    const accepted = await as(user, 'POST', `/v1/me/invitations/${invitations[0].id}/accept`);
    expect(accepted.statusCode, accepted.body).toBe(200);
    expect(json(accepted).role).toBe('member');
  });

  it('an unverified sign-up at the domain gets nothing, and neither does a manual_invitation domain', async () => {
    const { name } = await orgWithDomain('automatic_invitation');
    const typed = await signUp(t, { email: `bob@${name}` });
    expect(json(await as(typed, 'GET', '/v1/me/invitations')).data).toEqual([]);

    const manual = await orgWithDomain('manual_invitation');
    const user = await verifiedSignUp(`cy@${manual.name}`);
    expect(json(await as(user, 'GET', '/v1/me/invitations')).data).toEqual([]);
    expect(json(await as(user, 'GET', '/v1/me/organization-suggestions')).data).toEqual([]);
  });

  it('a revoked automatic invitation is not made again at the next sign-in', async () => {
    const { org, name } = await orgWithDomain('automatic_invitation');
    const email = `dee@${name}`;
    const user = await verifiedSignUp(email);
    const [invitation] = json(await as(user, 'GET', '/v1/me/invitations')).data;
    await sk('POST', `/v1/organizations/${org.id}/invitations/${invitation.id}/revoke`);
    await start(t, 'email-code', { email });
    const code = codeFrom((await outbox(t, email)).find((m) => m.kind === 'email_code')!);
    const again = await start(t, 'email-code/verify', { email, code });
    expect(again.statusCode).toBe(200);
    expect(json(await as(json(again).session, 'GET', '/v1/me/invitations')).data).toEqual([]);
  });

  it('automatic_suggestion: suggestion, request, then a member with org:members:manage accepts or rejects', async () => {
    const owner = await person(t, undefined, 'owner');
    const org = await createOrg(t, owner.userId, { name: 'Hooli' });
    const name = uniqueDomain();
    await sk('POST', `/v1/organizations/${org.id}/domains`, { name, enrollmentMode: 'automatic_suggestion' });
    await actAs(t, owner, org.id);

    const [alice, bob] = [await verifiedSignUp(`alice@${name}`), await verifiedSignUp(`bob@${name}`)];
    const [suggestion] = json(await as(alice, 'GET', '/v1/me/organization-suggestions')).data;
    expect(suggestion).toEqual({
      id: expect.stringMatching(/^orgreq_/),
      status: 'suggested',
      organization: { id: org.id, name: 'Hooli', slug: org.slug, imageUrl: null },
      createdAt: expect.any(Number),
    });
    // A suggestion is not a request until the user asks.
    expect(json(await as(owner, 'GET', '/v1/me/organization/membership-requests')).data).toEqual([]);

    const asked = await as(alice, 'POST', `/v1/me/organization-suggestions/${suggestion.id}/accept`);
    expect(json(asked).status).toBe('pending');
    const [bobSuggestion] = json(await as(bob, 'GET', '/v1/me/organization-suggestions')).data;
    await as(bob, 'POST', `/v1/me/organization-suggestions/${bobSuggestion.id}/accept`);

    const pending = json(await as(owner, 'GET', '/v1/me/organization/membership-requests')).data;
    expect(pending.map((r: { email: string }) => r.email)).toEqual([`alice@${name}`, `bob@${name}`]);

    const plain = await person(t, undefined, 'plain');
    await addMember(t, org.id, plain.userId, 'member');
    await actAs(t, plain, org.id);
    expect((await as(plain, 'POST', `/v1/me/organization/membership-requests/${pending[0].id}/accept`)).statusCode).toBe(403);

    const accepted = await as(owner, 'POST', `/v1/me/organization/membership-requests/${pending[0].id}/accept`);
    expect(json(accepted)).toMatchObject({ userId: alice.userId, status: 'accepted' });
    const rejected = await as(owner, 'POST', `/v1/me/organization/membership-requests/${pending[1].id}/reject`);
    expect(json(rejected)).toMatchObject({ userId: bob.userId, status: 'rejected' });
    expect((await as(owner, 'POST', `/v1/me/organization/membership-requests/${pending[1].id}/accept`)).statusCode).toBe(409);

    const members = json(await sk('GET', `/v1/organizations/${org.id}/members`)).data.map((m: { userId: string }) => m.userId);
    expect(members).toContain(alice.userId);
    expect(members).not.toContain(bob.userId);
    expect(json(await as(alice, 'GET', '/v1/me/organization-suggestions')).data).toEqual([]);
  });

  it('a suggestion follows the address: after the user moves to another address it is neither listed nor accepted', async () => {
    const owner = await person(t, undefined, 'owner');
    const org = await createOrg(t, owner.userId, { name: 'Initech' });
    const name = uniqueDomain();
    await sk('POST', `/v1/organizations/${org.id}/domains`, { name, enrollmentMode: 'automatic_suggestion' });
    const leaver = await verifiedSignUp(`leaver@${name}`);
    const [suggestion] = json(await as(leaver, 'GET', '/v1/me/organization-suggestions')).data;
    expect(suggestion.status).toBe('suggested');

    const moved = await sk('PATCH', `/v1/users/${leaver.userId}`, { email: `leaver@elsewhere-${name}`, emailVerified: true });
    expect(moved.statusCode, moved.body).toBe(200);
    expect(json(await as(leaver, 'GET', '/v1/me/organization-suggestions')).data).toEqual([]);
    const asked = await as(leaver, 'POST', `/v1/me/organization-suggestions/${suggestion.id}/accept`);
    expect(asked.statusCode).toBe(404);
    await actAs(t, owner, org.id);
    expect(json(await as(owner, 'GET', '/v1/me/organization/membership-requests')).data).toEqual([]);

    // Back at the domain with a verified address, it stands again.
    await sk('PATCH', `/v1/users/${leaver.userId}`, { email: `leaver@${name}`, emailVerified: true });
    expect(json(await as(leaver, 'GET', '/v1/me/organization-suggestions')).data.map((s: { id: string }) => s.id)).toEqual([suggestion.id]);
  });

  it('an organization deleted between the domain lookup and its lock is logged, and enrolment goes on with the next one', async () => {
    const name = uniqueDomain();
    const owner = await plainUser(t, undefined, 'owner');
    const [doomed, kept] = [await createOrg(t, owner.id, { name: 'Doomed' }), await createOrg(t, owner.id, { name: 'Kept' })];
    for (const org of [doomed, kept]) await sk('POST', `/v1/organizations/${org.id}/domains`, { name, enrollmentMode: 'automatic_suggestion' });
    const user = await verifiedSignUp(`racer@${name}`);
    const environment = await t.tenancy.getEnvironment(t.project.development.id);
    const row = await t.store.db
      .selectFrom('users')
      .selectAll()
      .where('environment_id', '=', environment.id)
      .where('id', '=', user.userId)
      .executeTakeFirstOrThrow();
    // Undo the sign-up's own enrolment, so that the racing one below is the one observed.
    await t.store.db
      .deleteFrom('organization_membership_requests')
      .where('environment_id', '=', environment.id)
      .where('user_id', '=', user.userId)
      .execute();

    const real = new OrganizationAccess(t.store);
    const warnings: unknown[] = [];
    const racing = new DomainService({
      store: t.store,
      tenancy: t.tenancy,
      now: clock.now,
      codeKey: Buffer.alloc(32),
      throttle: new SignInThrottle({ clock: Date.now }),
      wake: () => undefined,
      log: { warn: (entry: unknown) => warnings.push(entry) },
      access: {
        withOrganization: async (env, actor, organizationId, work) => {
          if (organizationId === doomed.id) await sk('DELETE', `/v1/organizations/${doomed.id}`);
          return real.withOrganization(env, actor, organizationId, work);
        },
      } as OrganizationAccess,
    });
    await expect(racing.enrol(environment, row)).resolves.toBeUndefined();
    expect(warnings).toEqual([expect.objectContaining({ organizationId: doomed.id })]);
    const suggestions = json(await as(user, 'GET', '/v1/me/organization-suggestions')).data;
    expect(suggestions.map((s: { organization: { id: string } }) => s.organization.id)).toEqual([kept.id]);
  });

  describe('on the session surface', () => {
    it('an owner adds a domain, which is verified by the code emailed to an address at it', async () => {
      const owner = await person(t, undefined, 'owner');
      const org = await createOrg(t, owner.userId, { name: 'Umbrella' });
      await actAs(t, owner, org.id);
      const name = uniqueDomain();
      const created = await as(owner, 'POST', '/v1/me/organization/domains', {
        name,
        enrollmentMode: 'automatic_invitation',
        email: `it@${name}`,
      });
      expect(created.statusCode, created.body).toBe(201);
      expect(json(created).verified).toBe(false);
      const [mail] = await outbox(t, `it@${name}`);
      expect(mail).toMatchObject({ kind: 'domain_verification', subject: `Verify ${name} for Umbrella on Test project` });

      // An unverified domain enrols nobody.
      const early = await verifiedSignUp(`early@${name}`);
      expect(json(await as(early, 'GET', '/v1/me/invitations')).data).toEqual([]);

      const code = codeFrom(mail!);
      const wrong = await as(owner, 'POST', `/v1/me/organization/domains/${json(created).id}/verify`, {
        code: code === '000000' ? '111111' : '000000',
      });
      expect(wrong.statusCode).toBe(401);
      expect(json(wrong).error.message).toContain('4 tries left');
      const verified = await as(owner, 'POST', `/v1/me/organization/domains/${json(created).id}/verify`, { code });
      expect(verified.statusCode, verified.body).toBe(200);
      expect(json(verified).verified).toBe(true);

      const late = await verifiedSignUp(`late@${name}`);
      expect(json(await as(late, 'GET', '/v1/me/invitations')).data).toHaveLength(1);
      expect(json(await as(owner, 'GET', '/v1/me/organization/domains')).data.map((d: { name: string }) => d.name)).toEqual([name]);
    });

    it('refuses an address off the domain, a public mail provider, a malformed name, and a member without org:manage', async () => {
      const owner = await person(t, undefined, 'owner');
      const org = await createOrg(t, owner.userId);
      await actAs(t, owner, org.id);
      const name = uniqueDomain();
      const off = await as(owner, 'POST', '/v1/me/organization/domains', {
        name,
        enrollmentMode: 'automatic_invitation',
        email: 'me@elsewhere.example',
      });
      expect(off.statusCode).toBe(400);
      expect(json(off).error.details.fields).toEqual(['email']);
      const gmail = await as(owner, 'POST', '/v1/me/organization/domains', {
        name: 'gmail.com',
        enrollmentMode: 'automatic_invitation',
        email: 'me@gmail.com',
      });
      expect(gmail.statusCode).toBe(400);
      expect(json(gmail).error.message).toContain('public email provider');
      for (const bad of ['localhost', 'not a domain', '-x.example', '10.0.0.1']) {
        const res = await sk('POST', `/v1/organizations/${org.id}/domains`, { name: bad, enrollmentMode: 'manual_invitation' });
        expect(res.statusCode, bad).toBe(400);
        expect(json(res).error.details.fields).toEqual(['name']);
      }
      const member = await person(t, undefined, 'member');
      await addMember(t, org.id, member.userId, 'member');
      await actAs(t, member, org.id);
      const refused = await as(member, 'POST', '/v1/me/organization/domains', {
        name,
        enrollmentMode: 'automatic_invitation',
        email: `x@${name}`,
      });
      expect(refused.statusCode).toBe(403);
      expect(json(refused).error.message).toContain('org:manage');
    });

    it('adding the domain again sends a new code but keeps counting wrong tries: no way to guess more codes', async () => {
      const owner = await person(t, undefined, 'owner');
      const org = await createOrg(t, owner.userId);
      await actAs(t, owner, org.id);
      const name = uniqueDomain();
      const add = () =>
        as(owner, 'POST', '/v1/me/organization/domains', { name, enrollmentMode: 'automatic_invitation', email: `it@${name}` });
      const id = json(await add()).id;
      const wrongCode = (real: string) => (real === '000000' ? '111111' : '000000');
      for (let i = 0; i < 4; i++)
        await as(owner, 'POST', `/v1/me/organization/domains/${id}/verify`, {
          code: wrongCode(codeFrom((await outbox(t, `it@${name}`))[0]!)),
        });
      await add();
      const real = codeFrom((await outbox(t, `it@${name}`))[0]!);
      expect(json(await as(owner, 'POST', `/v1/me/organization/domains/${id}/verify`, { code: wrongCode(real) })).error.message).toContain(
        'void',
      );
      const late = await as(owner, 'POST', `/v1/me/organization/domains/${id}/verify`, { code: real });
      expect(late.statusCode).toBe(401);
      // An hour later the count starts again.
      clock.advance(3_600_001);
      await actAs(t, owner, org.id); // a fresh access token: the old one expired meanwhile
      await add();
      const fresh = codeFrom((await outbox(t, `it@${name}`))[0]!);
      const ok = await as(owner, 'POST', `/v1/me/organization/domains/${id}/verify`, { code: fresh });
      expect(ok.statusCode, ok.body).toBe(200);
    });

    it('removing a domain withdraws the suggestions it made', async () => {
      const { org, name, domain } = await orgWithDomain('automatic_suggestion');
      const user = await verifiedSignUp(`sam@${name}`);
      expect(json(await as(user, 'GET', '/v1/me/organization-suggestions')).data).toHaveLength(1);
      await sk('DELETE', `/v1/organizations/${org.id}/domains/${domain.id}`);
      expect(json(await as(user, 'GET', '/v1/me/organization-suggestions')).data).toEqual([]);
    });

    it('changes the enrolment mode and removes a domain', async () => {
      const { org, domain } = await orgWithDomain('manual_invitation');
      const changed = await sk('PATCH', `/v1/organizations/${org.id}/domains/${domain.id}`, { enrollmentMode: 'automatic_suggestion' });
      expect(json(changed).enrollmentMode).toBe('automatic_suggestion');
      expect(json(await sk('DELETE', `/v1/organizations/${org.id}/domains/${domain.id}`))).toEqual({ id: domain.id, deleted: true });
      expect(json(await sk('GET', `/v1/organizations/${org.id}/domains`)).data).toEqual([]);
      expect((await sk('DELETE', `/v1/organizations/${org.id}/domains/${domain.id}`)).statusCode).toBe(404);
    });
  });
});
