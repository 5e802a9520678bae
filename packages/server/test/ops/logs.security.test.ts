import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loggableUrl, loggerOptions } from '../../src/http/logging.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { codeFrom, outbox, REDIRECT, start, tokenFrom } from '../helpers/flows.js';
import { json, refresh, signIn, signUp, uniqueEmail } from '../helpers/identity.js';
import { makePng } from '../helpers/images.js';
import { startOidcIdp, TestBrowser, type TestOidcIdp } from '../helpers/oidc-idp.js';
import { createConnection, enableSso, ssoStart, ssoVerify } from '../helpers/sso.js';
import { testDb } from '../helpers/store.js';
import { uploadThroughApi } from '../helpers/uploads.js';

/**
 * The attack: read the server's log (a log shipper, a support engineer, a leaked bucket) and
 * replay what it holds. Every flow is driven with the log captured exactly as `npm start` writes
 * it (loggerOptions, level info), and none of the tokens, secrets, passwords, codes or cookies it
 * used may appear in it.
 */
describe(`the log holds no credential (${testDb()})`, () => {
  let t: TestApp;
  let idp: TestOidcIdp;
  const lines: string[] = [];
  /** Every credential the flows used or were given. */
  const used = new Set<string>();
  const remember = (...values: (string | null | undefined)[]) => {
    for (const value of values) if (value) used.add(value);
  };

  beforeAll(async () => {
    t = await startTestApp({ logger: loggerOptions('info', { write: (line: string) => void lines.push(line) }) });
    idp = await startOidcIdp();
  }, 60_000);
  afterAll(async () => {
    await t.close();
    await idp.close();
  });

  it('drives every flow, and the log has none of their credentials, in one JSON line per entry with a request id', async () => {
    const env = t.project.development;
    remember(env.secretKey, t.platformKey, t.instanceSecret);

    // Platform: a project and a secret key, made through the API.
    const project = json(
      await t.call({ method: 'POST', url: '/v1/platform/projects', credential: t.platformKey, payload: { name: 'Logged' } }),
    );
    for (const e of project.environments) remember(e.secretKey);
    const secretKey = json(
      await t.call({ method: 'POST', url: `/v1/platform/environments/${env.id}/secret-keys`, credential: t.platformKey }),
    );
    remember(secretKey.secret ?? secretKey.secretKey);

    // Sign-up, sign-in, refresh, password change, sign-out.
    const password = `Log-${Math.random().toString(36).slice(2)}-pass phrase`;
    const email = uniqueEmail('logged');
    const signedUp = await signUp(t, { email, password });
    remember(password, signedUp.accessToken, signedUp.refreshToken);
    const signedIn = json(await signIn(t, email, password));
    remember(signedIn.session.accessToken, signedIn.session.refreshToken);
    const refreshed = json(await refresh(t, signedIn.session.refreshToken));
    remember(refreshed.session.accessToken, refreshed.session.refreshToken);
    const newPassword = `Changed-${Math.random().toString(36).slice(2)}-pass phrase`;
    remember(newPassword);
    const changed = await t.call({
      method: 'POST',
      url: '/v1/me/password',
      credential: refreshed.session.accessToken,
      payload: { currentPassword: password, newPassword },
    });
    expect(changed.statusCode, changed.body).toBe(200);

    // Email code, magic link, password reset.
    expect((await start(t, 'email-code', { email })).statusCode).toBe(202);
    const code = codeFrom((await outbox(t, email))[0]!);
    remember(code);
    const byCode = json(await start(t, 'email-code/verify', { email, code }));
    remember(byCode.session?.accessToken, byCode.session?.refreshToken);
    expect((await start(t, 'magic-link', { email, redirectUrl: REDIRECT })).statusCode).toBe(202);
    const linkToken = tokenFrom((await outbox(t, email))[0]!);
    remember(linkToken);
    remember(json(await start(t, 'magic-link/verify', { token: linkToken })).session?.refreshToken);
    expect((await start(t, 'password-reset', { email, redirectUrl: REDIRECT })).statusCode).toBe(202);
    const resetToken = tokenFrom((await outbox(t, email))[0]!);
    const resetPassword = `Reset-${Math.random().toString(36).slice(2)}-pass phrase`;
    remember(resetToken, resetPassword);
    expect((await start(t, 'password-reset/complete', { token: resetToken, newPassword: resetPassword })).statusCode).toBe(200);
    const current = json(await signIn(t, email, resetPassword)).session;
    remember(current.accessToken, current.refreshToken);

    // SSO (OIDC): the IdP's code and state travel in the callback's query.
    await enableSso(t, env);
    const connection = json(
      await createConnection(t, env, {
        type: 'oidc',
        name: 'Logged IdP',
        domains: ['corp.test'],
        issuer: idp.issuer,
        clientId: 'gatehouse',
        clientSecret: 'log-test-client-secret-0123456789',
      }),
    );
    remember('log-test-client-secret-0123456789');
    idp.setClient({ clientId: 'gatehouse', clientSecret: 'log-test-client-secret-0123456789', redirectUri: connection.redirectUri });
    idp.accounts.set('acct-logged', { email: uniqueEmail('sso').replace(/@.*/, '@corp.test'), email_verified: true });
    const started = json(await ssoStart(t, env, { connectionId: connection.id }));
    const browser = new TestBrowser(t);
    const answer = await browser.signIn(started.url, 'acct-logged');
    const callback = new URL(answer.callbackUrl);
    remember(callback.searchParams.get('code'), callback.searchParams.get('state'));
    const ssoToken = new URL(answer.location!).searchParams.get('token');
    remember(ssoToken);
    remember(json(await ssoVerify(t, env, ssoToken!)).session?.refreshToken);

    // Webhooks: the signing secret, created and rotated.
    const endpoint = json(
      await t.call({
        method: 'POST',
        url: `/v1/platform/environments/${env.id}/webhook-endpoints`,
        credential: t.platformKey,
        payload: { url: 'https://hooks.example.com/in' },
      }),
    );
    remember(endpoint.secret);
    const rotated = await t.call({
      method: 'POST',
      url: `/v1/platform/environments/${env.id}/webhook-endpoints/${endpoint.id}/rotate-secret`,
      credential: t.platformKey,
    });
    remember(rotated.statusCode === 200 ? json(rotated).secret : undefined);

    // Uploads: the signed PUT URL's signature.
    const ticket = await uploadThroughApi(t, current.accessToken, makePng(8, 8, { seed: 7 }), 'image/png', { width: 8, height: 8 });
    const signature = ticket.uploadUrl ? [...new URL(ticket.uploadUrl).searchParams.values()] : [];
    expect(signature.length).toBeGreaterThan(0);
    remember(...signature.filter((v) => v.length >= 16));

    // The console's setup link, opened as a browser would, and used.
    const setupLink = (await t.app.operators.setupLinkIfNoOperator())!;
    const setupToken = new URL(setupLink).searchParams.get('token')!;
    remember(setupToken);
    await t.call({ method: 'GET', url: `/console/setup?token=${encodeURIComponent(setupToken)}` });
    const operatorPassword = `Operator-${Math.random().toString(36).slice(2)}-pass phrase`;
    remember(operatorPassword);
    await t.call({
      method: 'POST',
      url: '/v1/console/setup',
      payload: { token: setupToken, email: uniqueEmail('op'), password: operatorPassword },
    });

    // An invitation's token, and a hosted page's handoff.
    const owner = json(
      await t.call({ method: 'POST', url: '/v1/users', credential: env.secretKey, payload: { email: uniqueEmail('owner') } }),
    );
    const org = json(
      await t.call({
        method: 'POST',
        url: '/v1/organizations',
        credential: env.secretKey,
        payload: { name: 'Logged org', ownerId: owner.id },
      }),
    );
    const invitee = uniqueEmail('invitee');
    await t.call({
      method: 'POST',
      url: `/v1/organizations/${org.id}/invitations`,
      credential: env.secretKey,
      payload: { email: invitee, role: 'member' },
    });
    const invitationToken = tokenFrom((await outbox(t, invitee))[0]!);
    remember(invitationToken);
    await t.call({ method: 'GET', url: `/hosted/${env.id}/accept-invitation?token=${encodeURIComponent(invitationToken)}` });
    remember(json(await start(t, 'invitations/accept', { token: invitationToken, password: resetPassword })).session?.refreshToken);
    const handoff = await t.call({
      method: 'POST',
      url: '/v1/me/handoff',
      credential: current.accessToken,
      payload: { redirectUrl: REDIRECT },
    });
    const handoffToken =
      handoff.statusCode === 200 ? new URLSearchParams(new URL(json(handoff).redirectUrl).hash.slice(1)).get('__gh_handoff') : null;
    expect(handoffToken).toBeTruthy();
    remember(handoffToken);
    if (handoffToken)
      await t.call({ method: 'POST', url: '/v1/auth/handoff', credential: env.publishableKey, payload: { token: handoffToken } });

    // The capture works: requests were logged, with their URLs.
    const log = lines.join('');
    expect(log).toContain('/v1/auth/signin');
    expect(log).toContain('/v1/sso/oidc/');
    expect(used.size).toBeGreaterThan(25);
    for (const value of used) {
      expect(log.includes(value), `the log holds a credential: ${value.slice(0, 12)}…`).toBe(false);
      expect(log.includes(encodeURIComponent(value)), `the log holds a credential, URL-encoded: ${value.slice(0, 12)}…`).toBe(false);
    }
    expect(log).not.toMatch(/authorization|cookie/i);

    // One JSON object per line; request lines carry reqId.
    const entries = log
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    const requestEntries = entries.filter((e) => e.msg === 'incoming request');
    expect(requestEntries.length).toBeGreaterThan(20);
    for (const entry of requestEntries) expect(typeof entry.reqId).toBe('string');
  }, 60_000);

  it('echoes the request id of its log lines in x-request-id', async () => {
    const res = await t.call({ method: 'GET', url: '/v1/health' });
    const id = String(res.headers['x-request-id']);
    expect(id).toMatch(/^[0-9a-f-]{36}$/);
    const entries = lines.map((line) => JSON.parse(line) as { reqId?: string; msg?: string });
    expect(entries.filter((e) => e.reqId === id).map((e) => e.msg)).toEqual(['incoming request', 'request completed']);
  });

  it('keeps harmless query parameters and hides every other value', () => {
    expect(loggableUrl('/v1/users?limit=5&cursor=abc')).toBe('/v1/users?limit=5&cursor=abc');
    expect(loggableUrl('/v1/sso/oidc/c/callback?code=SECRET&state=S2')).toBe('/v1/sso/oidc/c/callback?code=[redacted]&state=[redacted]');
    expect(loggableUrl('/uploads/x?signature=abc&expires=1')).toBe('/uploads/x?signature=[redacted]&expires=[redacted]');
    expect(loggableUrl('/console/setup?token=t')).toBe('/console/setup?token=[redacted]');
  });
});

describe('the request id from a trusted proxy', () => {
  it('is kept when proxies are trusted, and replaced otherwise', async () => {
    const trusting = await startTestApp({ trustProxy: ['127.0.0.1'] });
    const plain = await startTestApp();
    try {
      const given = { 'x-request-id': 'lb-1234-abcd' };
      expect((await trusting.call({ method: 'GET', url: '/v1/health', headers: given })).headers['x-request-id']).toBe('lb-1234-abcd');
      expect((await plain.call({ method: 'GET', url: '/v1/health', headers: given })).headers['x-request-id']).not.toBe('lb-1234-abcd');
      const forged = { 'x-request-id': 'a b"\\n' };
      expect((await trusting.call({ method: 'GET', url: '/v1/health', headers: forged })).headers['x-request-id']).not.toBe(
        forged['x-request-id'],
      );
    } finally {
      await trusting.close();
      await plain.close();
    }
  });
});
