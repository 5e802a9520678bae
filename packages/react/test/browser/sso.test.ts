import { describe, expect, it } from 'vitest';
import { chromiumAvailable, uniqueEmail } from '../helpers.js';
import { reactSuite } from './suite.js';

/** SignIn and the hosted page with an OIDC connection, through a real OIDC provider. */
describe.skipIf(!chromiumAvailable())('@gatehouse/react in Chromium: SSO', () => {
  const { suite, environment, createUser, open, shot, throughIdp } = reactSuite({ oidc: true });

  it('SSO: SignIn draws a button per connection, routes an email at its domain to it, and the OIDC round trip signs in', async () => {
    const env = await environment();
    await suite.live.t.setSettings(env.id, { authMethods: { password: true, magicLink: true, emailCode: true, sso: true } });
    const created = await suite.live.t.call({
      method: 'POST',
      url: `/v1/platform/environments/${env.id}/sso-connections`,
      credential: suite.live.t.platformKey,
      payload: {
        type: 'oidc',
        name: 'Corp ID',
        domains: ['corp.test'],
        issuer: suite.idp.issuer,
        clientId: 'react-test',
        clientSecret: 'react-test-secret',
      },
    });
    expect(created.statusCode, created.body).toBe(201);
    const connection = created.json() as { id: string; redirectUri: string };
    suite.idp.setClient({ clientId: 'react-test', clientSecret: 'react-test-secret', redirectUri: connection.redirectUri });
    const account = `acct-${Math.random().toString(36).slice(2)}`;
    const email = uniqueEmail('sso').replace(/@.*/, '@corp.test');
    suite.idp.accounts.set(account, { email, email_verified: true, given_name: 'Sid', family_name: 'Sso' });

    const page = await open(env);
    const button = page.getByRole('button', { name: 'Continue with Corp ID' });
    await button.waitFor();
    // An email at the connection's domain goes to SSO: no password field, the button names the IdP.
    await page.getByLabel('Email address').fill(email);
    expect(await page.getByLabel('Password').count()).toBe(0);
    await page.getByRole('button', { name: 'Continue with Corp ID' }).nth(1).waitFor();
    await shot(page, 'sign-in-sso-light');
    const dark = await open(env, 'app', 'dark');
    await dark.getByLabel('Email address').fill(email);
    await dark.getByRole('button', { name: 'Continue with Corp ID' }).nth(1).waitFor();
    await shot(dark, 'sign-in-sso-dark');
    await dark.close();
    // SignUp offers the same connections (an SSO sign-in creates the account).
    const signUp = await open(env, 'sign-up');
    await signUp.getByRole('button', { name: 'Continue with Corp ID' }).waitFor();
    await signUp.close();
    await page.getByLabel('Email address').fill('someone@elsewhere.test');
    await page.getByLabel('Password').waitFor();

    // The round trip through the IdP's login and consent pages, and back to the application.
    await button.click();
    await throughIdp(page, account);
    await page.waitForSelector('#status[data-signed-in=true]');
    await expect
      .poll(() => page.evaluate(() => (window as unknown as { gh: { state: { user: { email: string } | null } } }).gh.state.user?.email))
      .toBe(email);
    // The one-time token and the SSO mark left the address bar.
    expect(await page.evaluate(() => new URLSearchParams(location.search).has('token'))).toBe(false);
    await page.close();

    // The hosted sign-in page draws the same button; the IdP's answer comes back to it, then the
    // handoff to the application.
    const hosted = await suite.browser.newPage({ viewport: { width: 960, height: 720 } });
    const back = suite.app.url({ pk: env.publishableKey, base: suite.live.url, view: 'app' });
    await hosted.goto(`${suite.live.url}/hosted/${env.id}/sign-in?redirect_url=${encodeURIComponent(back)}`);
    await hosted.getByRole('button', { name: 'Continue with Corp ID' }).click();
    await throughIdp(hosted, account);
    await hosted.waitForURL((url) => url.href.startsWith(back.split('?')[0]!));
    await hosted.waitForSelector('#status[data-signed-in=true]');
    await hosted.close();

    // An IdP that does not vouch for the address of an existing account: the refusal comes back to
    // the page and is shown as its message.
    const existing = await createUser(env, uniqueEmail('taken').replace(/@.*/, '@corp.test'));
    const unverified = `acct-${Math.random().toString(36).slice(2)}`;
    suite.idp.accounts.set(unverified, { email: existing.email, email_verified: false });
    const refused = await open(env);
    await refused.getByRole('button', { name: 'Continue with Corp ID' }).click();
    await throughIdp(refused, unverified);
    const formError = refused.locator('[data-gh-component=sign-in] .gh-form-error');
    // The server's error_description, not a bare code.
    await expect.poll(() => formError.textContent()).toMatch(/\S/);
    expect(await formError.textContent()).not.toContain('account_exists');
    expect(await refused.locator('#status').getAttribute('data-signed-in')).toBe('false');
    expect(new URL(refused.url()).searchParams.has('error')).toBe(false);
    await shot(refused, 'sign-in-sso-refused-light');
    await refused.close();

    // SSO turned off in settings: its buttons disappear without a code change.
    await suite.live.t.setSettings(env.id, { authMethods: { password: true, magicLink: true, emailCode: true, sso: false } });
    const off = await open(env);
    await off.getByLabel('Password').waitFor();
    expect(await off.getByRole('button', { name: 'Continue with Corp ID' }).count()).toBe(0);
    await off.close();
    await suite.live.t.setSettings(env.id, { authMethods: { password: true, magicLink: true, emailCode: true, sso: true } });

    // The connection goes away while a page still shows it: 422 sso_not_configured, and the
    // password comes back for that email.
    const stale = await open(env);
    await stale.getByRole('button', { name: 'Continue with Corp ID' }).waitFor();
    const removed = await suite.live.t.call({
      method: 'DELETE',
      url: `/v1/platform/environments/${env.id}/sso-connections/${connection.id}`,
      credential: suite.live.t.platformKey,
    });
    expect(removed.statusCode, removed.body).toBe(200);
    await stale.getByLabel('Email address').fill(email);
    await stale.getByRole('button', { name: 'Continue with Corp ID' }).nth(1).click();
    await stale.getByLabel('Password').waitFor();
    expect(await stale.getByText('corp.test signs in with Corp ID.').count()).toBe(0);
    await stale.close();
  });
});
