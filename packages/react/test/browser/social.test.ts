import { describe, expect, it } from 'vitest';
import { chromiumAvailable, uniqueEmail } from '../helpers.js';
import { reactSuite } from './suite.js';

/** Social connections in SignIn, SignUp, UserProfile's "Connected accounts" and the hosted pages, through a real OIDC provider. */
describe.skipIf(!chromiumAvailable())('@gatehouse/react in Chromium: social connections', () => {
  const { suite, environment, createUser, open, shot, throughIdp, signInWithPassword } = reactSuite({ oidc: true });

  async function socialConnection(envId: string, name: string) {
    const created = await suite.live.t.call({
      method: 'POST',
      url: `/v1/platform/environments/${envId}/sso-connections`,
      credential: suite.live.t.platformKey,
      payload: {
        type: 'oidc',
        name,
        domains: [],
        issuer: suite.idp.issuer,
        clientId: 'social-test',
        clientSecret: 'social-test-secret',
        trustEmailVerified: true,
      },
    });
    expect(created.statusCode, created.body).toBe(201);
    return created.json() as { id: string; redirectUri: string };
  }

  it('SignIn and SignUp draw a button per social connection, with its name and a neutral icon; the round trip signs in', async () => {
    const env = await environment();
    await suite.live.t.setSettings(env.id, { authMethods: { password: true, magicLink: true, emailCode: true, sso: true } });
    const acme = await socialConnection(env.id, 'Acme ID');
    await socialConnection(env.id, 'Example Login');
    suite.idp.setClient({ clientId: 'social-test', clientSecret: 'social-test-secret', redirectUri: acme.redirectUri });

    const page = await open(env);
    const button = page.getByRole('button', { name: 'Continue with Acme ID' });
    await button.waitFor();
    await page.getByRole('button', { name: 'Continue with Example Login' }).waitFor();
    expect(await button.getAttribute('data-gh-provider')).toBe('oidc');
    expect(await button.locator('svg[aria-hidden=true]').count()).toBe(1);
    // A social connection has no domains: an email never routes to it, the password stays.
    await page.getByLabel('Email address').fill('someone@example.test');
    await page.getByLabel('Password').waitFor();
    await shot(page, 'sign-in-social-light');
    const dark = await open(env, 'app', 'dark');
    await dark.getByRole('button', { name: 'Continue with Acme ID' }).waitFor();
    await shot(dark, 'sign-in-social-dark');
    await dark.close();
    const signUp = await open(env, 'sign-up');
    await signUp.getByRole('button', { name: 'Continue with Acme ID' }).waitFor();
    await shot(signUp, 'sign-up-social');
    await signUp.close();

    const account = `social-${Math.random().toString(36).slice(2)}`;
    const email = uniqueEmail('social');
    suite.idp.accounts.set(account, { email, email_verified: true, given_name: 'Sol', family_name: 'Social' });
    await button.click();
    await throughIdp(page, account);
    await page.waitForSelector('#status[data-signed-in=true]');
    await expect
      .poll(() => page.evaluate(() => (window as unknown as { gh: { state: { user: { email: string } | null } } }).gh.state.user?.email))
      .toBe(email);
    await page.close();
  });

  it('UserProfile: Connected accounts links a provider (Connect, through the IdP), lists it, and disconnects it; the last way in is refused with its reason', async () => {
    const env = await environment();
    await suite.live.t.setSettings(env.id, { authMethods: { password: true, magicLink: false, emailCode: false, sso: true } });
    const acme = await socialConnection(env.id, 'Acme ID');
    suite.idp.setClient({ clientId: 'social-test', clientSecret: 'social-test-secret', redirectUri: acme.redirectUri });
    const user = await createUser(env);
    const page = await open(env);
    await signInWithPassword(page, user.email);
    await page.waitForSelector('#status[data-signed-in=true]');
    await page.goto(page.url().replace('view=app', 'view=user-profile'));
    await page.getByRole('heading', { name: 'Connected accounts' }).waitFor();
    await page.getByText('No connected accounts.').waitFor();
    await shot(page, 'user-profile-connected-none');

    const account = `link-${Math.random().toString(36).slice(2)}`;
    const providerEmail = uniqueEmail('elsewhere');
    suite.idp.accounts.set(account, { email: providerEmail, email_verified: true });
    await page.getByRole('button', { name: 'Connect Acme ID' }).click();
    await throughIdp(page, account);
    await page.getByText('Account connected.').waitFor();
    const row = page.locator('[data-gh-identity]');
    await row.waitFor();
    expect(await row.textContent()).toContain(providerEmail);
    // The link's parameters left the address bar.
    expect(await page.evaluate(() => ['token', '__gh_link'].some((p) => new URLSearchParams(location.search).has(p)))).toBe(false);
    await shot(page, 'user-profile-connected-accounts');

    await page.getByRole('button', { name: 'Disconnect Acme ID' }).click();
    await page.getByText('No connected accounts.').waitFor();
    await page.close();

    // A user whose only way in is the provider (no password; email links off): Disconnect is refused, with the reason.
    const only = `only-${Math.random().toString(36).slice(2)}`;
    suite.idp.accounts.set(only, { email: uniqueEmail('only'), email_verified: true });
    const fresh = await open(env);
    await fresh.getByRole('button', { name: 'Continue with Acme ID' }).click();
    await throughIdp(fresh, only);
    await fresh.waitForSelector('#status[data-signed-in=true]');
    await fresh.goto(fresh.url().replace('view=app', 'view=user-profile'));
    await fresh.getByRole('button', { name: 'Disconnect Acme ID' }).click();
    await fresh.getByText('last way to sign in').waitFor();
    await shot(fresh, 'user-profile-connected-last-way');
    await fresh.close();
  });

  it('hosted pages: the sign-in page draws the social button; after it, the hosted account page lists the connected account', async () => {
    const env = await environment();
    await suite.live.t.setSettings(env.id, { authMethods: { password: true, magicLink: true, emailCode: true, sso: true } });
    const acme = await socialConnection(env.id, 'Acme ID');
    suite.idp.setClient({ clientId: 'social-test', clientSecret: 'social-test-secret', redirectUri: acme.redirectUri });
    const account = `hosted-${Math.random().toString(36).slice(2)}`;
    const email = uniqueEmail('hosted');
    suite.idp.accounts.set(account, { email, email_verified: true });
    const hosted = await suite.browser.newPage({ viewport: { width: 960, height: 800 } });
    await hosted.goto(`${suite.live.url}/hosted/${env.id}/sign-in`);
    const button = hosted.getByRole('button', { name: 'Continue with Acme ID' });
    await button.waitFor();
    await shot(hosted, 'hosted-sign-in-social');
    await button.click();
    await throughIdp(hosted, account);
    // Without redirect_url the hosted sign-in goes to the hosted account page.
    await hosted.waitForURL((url) => url.pathname.endsWith('/user'));
    const row = hosted.locator('[data-gh-identity]');
    await row.waitFor();
    expect(await row.textContent()).toContain(email);
    await shot(hosted, 'hosted-user-connected-accounts');
    await hosted.close();
  });
});
