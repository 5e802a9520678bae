import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createGatehouse, type Gatehouse } from '../src/index.js';
import { readRedirectRequest, startTestIdp, type TestIdp } from '../../server/test/helpers/saml-idp.js';
import { REDIRECT, startLiveGatehouse, uniqueEmail, type LiveGatehouse } from './helpers/gatehouse.js';

/** gh.signIn.sso.start and handleRedirect() against a real server and an in-process SAML IdP. */
let live: LiveGatehouse;
let idp: TestIdp;
let connection: { id: string; acsUrl: string; spEntityId: string };
let gh: Gatehouse;

beforeAll(async () => {
  live = await startLiveGatehouse();
  idp = await startTestIdp({ ssoUrl: 'https://idp.corp.test/sso' });
  const env = live.t.project.development;
  await live.t.setSettings(env.id, { authMethods: { password: true, magicLink: true, emailCode: true, sso: true } });
  const created = await live.t.call({
    method: 'POST',
    url: `/v1/platform/environments/${env.id}/sso-connections`,
    credential: live.t.platformKey,
    payload: { type: 'saml', name: 'Corp', domains: ['corp.test'], idpMetadataXml: idp.metadataXml },
  });
  expect(created.statusCode, created.body).toBe(201);
  connection = JSON.parse(created.body);
  gh = createGatehouse({ publishableKey: env.publishableKey, baseUrl: live.url });
  await gh.load();
});
afterAll(async () => {
  gh.destroy();
  await live.close();
});

/** The browser's trip: to the IdP, which posts the signed response back to the ACS. */
async function throughIdp(url: string, nameId: string): Promise<string> {
  const request = readRedirectRequest(url);
  const SAMLResponse = await idp.issue({ spEntityId: connection.spEntityId, acsUrl: connection.acsUrl }, { inResponseTo: request.id, nameId });
  const acs = await fetch(`${live.url}${new URL(connection.acsUrl).pathname}`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ SAMLResponse, RelayState: request.relayState! }).toString(),
  });
  expect(acs.status).toBe(303);
  return acs.headers.get('location')!;
}

describe('SSO in @gatehouse/js', () => {
  it('environment lists the connection; start, the IdP, and handleRedirect sign the user in', async () => {
    const info = await fetch(`${live.url}/v1/environment`, { headers: { authorization: `Bearer ${live.t.project.development.publishableKey}` } });
    expect((await info.json()).ssoConnections).toEqual([{ id: connection.id, name: 'Corp', type: 'saml', domains: ['corp.test'], provider: 'saml' }]);
    const email = uniqueEmail('js-sso').replace(/@.*/, '@corp.test');
    const { url } = await gh.signIn.sso.start({ email, redirectUrl: REDIRECT, navigate: false });
    const back = await throughIdp(url, email);
    const state = await gh.handleRedirect(back);
    expect(state).toMatchObject({ isSignedIn: true, user: { email } });
    await gh.signOut();
  });

  it('user.identities: link (through the IdP; handleRedirect completes it with this session), list, unlink', async () => {
    await gh.signUp({ email: uniqueEmail('js-link'), password: 'correct horse battery staple' });
    expect(await gh.user.identities.list()).toEqual([]);
    const { url } = await gh.user.identities.link({ connectionId: connection.id, redirectUrl: REDIRECT, navigate: false });
    const back = await throughIdp(url, uniqueEmail('js-link-idp').replace(/@.*/, '@corp.test'));
    expect(new URL(back).searchParams.get('__gh_link')).toBe('1');
    const state = await gh.handleRedirect(back);
    expect(state.isSignedIn).toBe(true);
    const [identity] = await gh.user.identities.list();
    expect(identity).toMatchObject({ connectionId: connection.id, type: 'saml', provider: 'saml' });
    await gh.user.identities.unlink(identity!.id);
    expect(await gh.user.identities.list()).toEqual([]);
    await expect(gh.user.identities.unlink(identity!.id)).rejects.toMatchObject({ status: 404, code: 'not_found' });
    await gh.signOut();
  });

  it('an SSO refusal is thrown with its code', async () => {
    const email = uniqueEmail('js-sso-out').replace(/@.*/, '@elsewhere.test');
    const { url } = await gh.signIn.sso.start({ connectionId: connection.id, redirectUrl: REDIRECT, navigate: false });
    const back = await throughIdp(url, email);
    await expect(gh.handleRedirect(back)).rejects.toMatchObject({ code: 'email_not_verified' });
  });

  it("in a browser the refusal's message is the IdP page's error_description, and the address bar is cleaned", async () => {
    const email = uniqueEmail('js-sso-bar').replace(/@.*/, '@elsewhere.test');
    const { url } = await gh.signIn.sso.start({ connectionId: connection.id, redirectUrl: REDIRECT, navigate: false });
    const back = await throughIdp(url, email);
    const description = new URL(back).searchParams.get('error_description');
    expect(description).toBeTruthy();
    const bar = { href: back };
    vi.stubGlobal('location', bar);
    vi.stubGlobal('history', { state: null, replaceState: (_state: unknown, _title: string, next: string) => void (bar.href = next) });
    try {
      await expect(gh.handleRedirect()).rejects.toMatchObject({ code: 'email_not_verified', message: description });
      expect(new URL(bar.href).searchParams.has('error')).toBe(false);
    } finally {
      vi.unstubAllGlobals();
    }
  });
});
