import { mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  chromiumAvailable,
  CHROMIUM,
  CHROMIUM_ARGS,
  codeFrom,
  GOOD_PASSWORD,
  makePng,
  outbox,
  startAppServer,
  startLiveGatehouse,
  uniqueEmail,
  type AppServer,
  type LiveGatehouse,
} from '../helpers.js';
import { startOidcIdp, type TestOidcIdp } from '../../../server/test/helpers/oidc-idp.js';

/** Screenshots of every component in both themes; docs/react-components.md shows them. */
const SCREENSHOTS = fileURLToPath(new URL('../../../../docs/screenshots/react/', import.meta.url));

describe.skipIf(!chromiumAvailable())('@gatehouse/react in Chromium', () => {
  let live: LiveGatehouse;
  let app: AppServer;
  let browser: Browser;
  let idp: TestOidcIdp;

  beforeAll(async () => {
    const { chromium } = await import('playwright-core');
    mkdirSync(SCREENSHOTS, { recursive: true });
    [live, app, browser, idp] = await Promise.all([startLiveGatehouse(), startAppServer(), chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS }), startOidcIdp()]);
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await idp?.close();
    await app?.close();
    await live?.close();
  });

  async function environment() {
    const project = await live.t.createProject('Acme');
    return project.development;
  }

  async function createUser(env: { secretKey: string }, email = uniqueEmail('react'), extra: Record<string, unknown> = {}) {
    const created = await live.t.call({ method: 'POST', url: '/v1/users', credential: env.secretKey, payload: { email, password: GOOD_PASSWORD, firstName: 'Ada', lastName: 'Lovelace', ...extra } });
    expect(created.statusCode).toBe(201);
    return { email, id: (created.json() as { id: string }).id };
  }

  async function open(env: { publishableKey: string }, view = 'app', theme = 'light'): Promise<Page> {
    const page = await browser.newPage({ viewport: { width: 960, height: 720 } });
    page.on('pageerror', (error) => console.error('[page error]', error));
    await page.goto(app.url({ pk: env.publishableKey, base: live.url, view, theme }));
    await page.waitForSelector('#status[data-loaded=true]');
    return page;
  }

  const shot = (page: Page, name: string) => page.screenshot({ path: join(SCREENSHOTS, `${name}.png`) });

  /** Creates an organization through the page's client and makes it active. */
  async function createActiveOrganization(page: Page, name: string) {
    type Client = { organizations: { create(p: object): Promise<{ id: string }> }; setActiveOrganization(id: string): Promise<unknown> };
    await page.evaluate(async (orgName) => {
      const gh = (window as unknown as { gh: Client }).gh;
      await gh.setActiveOrganization((await gh.organizations.create({ name: orgName })).id);
    }, name);
  }

  /** The IdP's login page (any password), then its consent page unless it went straight back. */
  async function throughIdp(page: Page, login: string) {
    await page.waitForURL((url) => url.href.startsWith(idp.issuer));
    await page.locator('input[name=login]').fill(login);
    await page.locator('input[name=password]').fill('any');
    const loginPage = page.url();
    await page.locator('button[type=submit]').first().click();
    await page.waitForURL((url) => url.href !== loginPage);
    if (page.url().startsWith(idp.issuer)) await page.locator('button[type=submit]').first().click();
  }

  async function signInWithPassword(page: Page, email: string, password = GOOD_PASSWORD) {
    await page.getByLabel('Email address').fill(email);
    await page.getByLabel('Password').fill(password);
    await page.getByRole('button', { name: 'Continue' }).click();
  }

  it('signs up, signs out, and signs in with a password; a wrong password is shown next to its field', async () => {
    const env = await environment();
    const page = await open(env, 'sign-up');
    await page.waitForSelector('[data-gh-component=sign-up] input[name=email]');
    await shot(page, 'sign-up-light');
    const email = uniqueEmail('signup');
    await page.getByLabel('First name').fill('Grace');
    await page.getByLabel('Email address').fill(email);
    await page.getByLabel('Password').fill('short');
    await page.getByRole('button', { name: 'Create account' }).click();
    // The server's refusal, next to the field it names, in a live region.
    const passwordError = page.locator('[data-gh-component=sign-up] input[name=password] ~ .gh-field-error');
    await expect.poll(() => passwordError.textContent()).not.toBe('');
    expect(await passwordError.getAttribute('aria-live')).toBe('polite');
    await shot(page, 'sign-up-error-light');
    await page.getByLabel('Password').fill(GOOD_PASSWORD);
    await page.getByRole('button', { name: 'Create account' }).click();
    await page.waitForSelector('#status[data-signed-in=true]');

    await page.goto(app.url({ pk: env.publishableKey, base: live.url, view: 'app' }));
    await page.getByRole('button', { name: /Account menu for Grace/ }).click();
    await page.getByRole('menuitem', { name: 'Sign out' }).click();
    await page.waitForSelector('#status[data-signed-in=false]');

    await signInWithPassword(page, email, 'Wrong-password-123');
    const signInError = page.locator('[data-gh-component=sign-in] input[name=password] ~ .gh-field-error');
    await expect.poll(() => signInError.textContent()).toMatch(/\S/);
    await shot(page, 'sign-in-error-light');
    await page.getByLabel('Password').fill(GOOD_PASSWORD);
    await page.getByRole('button', { name: 'Continue' }).click();
    await page.waitForSelector('#status[data-signed-in=true]');
    await page.close();
  });

  it('a signed-in user never sees the signed-out UI while loading', async () => {
    const env = await environment();
    const { email } = await createUser(env);
    const page = await open(env);
    await signInWithPassword(page, email);
    await page.waitForSelector('#status[data-signed-in=true]');
    // Record every paint of the sign-in card from the first script on.
    await page.addInitScript(() => {
      (window as unknown as { sawSignIn: boolean }).sawSignIn = false;
      new MutationObserver(() => {
        if (document.querySelector('[data-gh-component=sign-in]')) (window as unknown as { sawSignIn: boolean }).sawSignIn = true;
      }).observe(document, { childList: true, subtree: true });
    });
    await page.reload();
    await page.waitForSelector('#status[data-signed-in=true]');
    expect(await page.evaluate(() => (window as unknown as { sawSignIn: boolean }).sawSignIn)).toBe(false);
    await page.close();
  });

  it('signs in with an emailed code; a method turned off in settings disappears from SignIn', async () => {
    const env = await environment();
    const { email } = await createUser(env);
    let page = await open(env);
    await page.getByLabel('Email address').fill(email);
    await page.getByRole('button', { name: 'Email me a code' }).click();
    await page.getByLabel('Verification code').waitFor();
    await shot(page, 'sign-in-code-light');
    const mail = (await outbox(live.t, email, env)).find((m) => m.kind === 'email_code' || /code/i.test(m.subject))!;
    await page.getByLabel('Verification code').fill(codeFrom(mail));
    await page.getByRole('button', { name: 'Verify' }).click();
    await page.waitForSelector('#status[data-signed-in=true]');
    await page.close();

    await live.t.setSettings(env.id, { authMethods: { emailCode: false, magicLink: false } });
    page = await open(env);
    await page.getByLabel('Password').waitFor();
    expect(await page.getByRole('button', { name: 'Email me a code' }).count()).toBe(0);
    expect(await page.getByRole('button', { name: 'Email me a sign-in link' }).count()).toBe(0);
    await page.close();
  });

  it('signs in with a magic link read from the dev outbox', async () => {
    const env = await environment();
    const { email } = await createUser(env);
    const page = await open(env);
    await page.getByLabel('Email address').fill(email);
    await page.getByRole('button', { name: 'Email me a sign-in link' }).click();
    await page.getByText('Check your inbox').waitFor();
    await shot(page, 'sign-in-link-sent-light');
    const mail = (await outbox(live.t, email, env)).find((m) => m.kind === 'magic_link')!;
    const link = /(https?:\/\/\S+)/.exec(mail.text)![1]!;
    expect(new URL(link).origin).toBe(new URL(page.url()).origin);
    await page.goto(link);
    await page.waitForSelector('#status[data-signed-in=true]');
    // The one-time token left the address bar.
    expect(new URL(page.url()).searchParams.has('token')).toBe(false);
    await page.close();
  });

  it('user button and profile: edit the name, upload an avatar that is then shown, change the password', async () => {
    const env = await environment();
    const { email } = await createUser(env);
    const page = await open(env);
    await signInWithPassword(page, email);
    await page.getByRole('button', { name: /Account menu for Ada Lovelace/ }).click();
    await shot(page, 'user-button-light');
    await page.getByRole('menuitem', { name: 'Manage account' }).click();
    const dialog = page.getByRole('dialog', { name: 'Manage account' });
    await dialog.getByLabel('First name').fill('Augusta');
    await dialog.getByRole('button', { name: 'Save' }).click();
    await dialog.getByText('Saved.').waitFor();
    const file = join(tmpdir(), `avatar-${Date.now()}.png`);
    writeFileSync(file, makePng(64, 64, { seed: 7 }));
    await dialog.getByLabel('Upload a profile picture').setInputFiles(file);
    const avatar = dialog.locator('img.gh-avatar');
    await avatar.waitFor();
    await expect.poll(() => avatar.evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth)).toBe(64);
    await shot(page, 'user-profile-light');
    await dialog.getByRole('tab', { name: 'Security' }).click();
    await dialog.getByLabel('Current password').fill(GOOD_PASSWORD);
    await dialog.getByLabel('New password').fill(`${GOOD_PASSWORD}-2`);
    await dialog.getByRole('button', { name: 'Change password' }).click();
    await dialog.getByText(/Password changed/).waitFor();
    await dialog.getByText('This device').waitFor();
    await shot(page, 'user-profile-security-light');
    await page.keyboard.press('Escape');
    expect(await page.locator('#status').getAttribute('data-signed-in')).toBe('true');
    await page.close();
  });

  it('creates an organization, switches to it, adds a member and changes a role', async () => {
    const env = await environment();
    const { email } = await createUser(env);
    const other = await createUser(env, uniqueEmail('member'));
    const page = await open(env);
    await signInWithPassword(page, email);
    await page.getByRole('button', { name: /Switch organization/ }).click();
    await page.getByRole('menuitem', { name: 'Create organization' }).click();
    const create = page.getByRole('dialog', { name: 'Create organization' });
    await create.getByLabel('Name').fill('Analytical Engines');
    await create.getByRole('button', { name: 'Create organization' }).click();
    await page.waitForSelector('#status[data-org-role=owner]');
    expect(await page.locator('#protected').textContent()).toBe('organization manager area');
    await page.getByRole('button', { name: /Active organization: Analytical Engines/ }).click();
    await shot(page, 'organization-switcher-light');
    // Switch to the personal account and back.
    await page.getByRole('menuitemradio', { name: /Personal account/ }).click();
    await page.waitForSelector('#status[data-org-role=""]');
    expect(await page.locator('#protected').textContent()).toBe('not an organization manager');
    await page.getByRole('button', { name: /Switch organization/ }).click();
    await page.getByRole('menuitemradio', { name: /Analytical Engines/ }).click();
    await page.waitForSelector('#status[data-org-role=owner]');

    await page.getByRole('button', { name: /Switch organization/ }).click();
    await page.getByRole('menuitem', { name: 'Manage' }).click();
    const manage = page.getByRole('dialog', { name: 'Manage organization' });
    await manage.getByLabel('Email address of an existing user').fill(other.email);
    await manage.getByRole('button', { name: 'Add member' }).click();
    const role = manage.getByLabel(`Role of ${other.email}`);
    await role.waitFor();
    await role.selectOption('admin');
    await expect.poll(() => role.inputValue()).toBe('admin');
    const members = await live.t.call({ method: 'GET', url: `/v1/me/organization/members`, credential: await page.evaluate(() => (window as unknown as { gh: { getToken(): Promise<string> } }).gh.getToken()) });
    expect((members.json() as { data: { email: string; role: string }[] }).data.find((m) => m.email === other.email)?.role).toBe('admin');
    await shot(page, 'organization-profile-light');
    await page.close();
  });

  it('hosted sign-in page: signs in and hands the session back to the application (#__gh_handoff)', async () => {
    const env = await environment();
    const { email } = await createUser(env);
    const page = await browser.newPage({ viewport: { width: 960, height: 720 } });
    page.on('pageerror', (error) => console.error('[page error]', error));
    const back = app.url({ pk: env.publishableKey, base: live.url, view: 'app' });
    await page.goto(`${live.url}/hosted/${env.id}/sign-in?redirect_url=${encodeURIComponent(back)}`);
    await page.getByLabel('Password').waitFor();
    await shot(page, 'hosted-sign-in');
    await signInWithPassword(page, email);
    await page.waitForURL((url) => url.href.startsWith(back.split('?')[0]!));
    await page.waitForSelector('#status[data-signed-in=true]');
    // The one-time token left the address bar once used.
    await expect.poll(() => page.evaluate(() => location.hash)).toBe('');
    await page.close();
  });

  it('hosted page refuses a redirect_url outside the origin lock, with a message', async () => {
    const env = await environment();
    const page = await browser.newPage({ viewport: { width: 960, height: 720 } });
    await page.goto(`${live.url}/hosted/${env.id}/sign-in?redirect_url=${encodeURIComponent('https://evil.example.com/steal')}`);
    const refused = page.locator('[data-gh-component=hosted-refused]');
    await refused.waitFor();
    expect(await refused.textContent()).toMatch(/redirect_url .*is not allowed/);
    expect(await page.getByLabel('Password').count()).toBe(0);
    await shot(page, 'hosted-refused');
    await page.close();
  });

  it('verified sign-up: SignUp and the hosted sign-up page ask for the emailed code, then sign in', async () => {
    // A fresh environment's default (the test helper turns it off for the others).
    const env = await environment();
    await live.t.setSettings(env.id, { emailVerification: 'required' });
    const page = await open(env, 'sign-up');
    const email = uniqueEmail('verify');
    await page.getByLabel('First name').fill('Vera');
    await page.getByLabel('Email address').fill(email);
    await page.getByLabel('Password').fill(GOOD_PASSWORD);
    await page.getByRole('button', { name: 'Create account' }).click();
    await page.getByLabel('Verification code').waitFor();
    expect(await page.locator('#status').getAttribute('data-signed-in')).toBe('false');
    await shot(page, 'sign-up-verify-light');
    const dark = await open(env, 'sign-up', 'dark');
    await dark.getByLabel('Email address').fill(uniqueEmail('verify-dark'));
    await dark.getByLabel('Password').fill(GOOD_PASSWORD);
    await dark.getByRole('button', { name: 'Create account' }).click();
    await dark.getByLabel('Verification code').waitFor();
    await shot(dark, 'sign-up-verify-dark');
    await dark.close();
    // "Send a new code" starts again: the newest code is the one that works.
    await page.getByRole('button', { name: 'Send a new code' }).click();
    const codes = async () => (await outbox(live.t, email, env)).filter((m) => m.kind === 'sign_up_verification');
    await expect.poll(async () => (await codes()).length).toBe(2);
    const code = codeFrom((await codes())[0]!); // the outbox lists the newest first
    // A wrong code is shown next to the code field, and the right one still works.
    await page.getByLabel('Verification code').fill(code === '000000' ? '111111' : '000000');
    await page.getByRole('button', { name: 'Verify and create account' }).click();
    const codeError = page.locator('[data-gh-component=sign-up] input[name=code] ~ .gh-field-error');
    await expect.poll(() => codeError.textContent()).toMatch(/\S/);
    await page.getByLabel('Verification code').fill(code);
    await page.getByRole('button', { name: 'Verify and create account' }).click();
    await page.waitForSelector('#status[data-signed-in=true]');
    expect(await page.evaluate(() => (window as unknown as { gh: { state: { user: { emailVerified: boolean } } } }).gh.state.user.emailVerified)).toBe(true);
    await page.close();

    // The hosted sign-up page on the same environment: the code step, then the handoff back.
    const hosted = await browser.newPage({ viewport: { width: 960, height: 720 } });
    hosted.on('pageerror', (error) => console.error('[page error]', error));
    const back = app.url({ pk: env.publishableKey, base: live.url, view: 'app' });
    await hosted.goto(`${live.url}/hosted/${env.id}/sign-up?redirect_url=${encodeURIComponent(back)}`);
    const second = uniqueEmail('hosted-verify');
    await hosted.getByLabel('Email address').fill(second);
    await hosted.getByLabel('Password').fill(GOOD_PASSWORD);
    await hosted.getByRole('button', { name: 'Create account' }).click();
    await hosted.getByLabel('Verification code').waitFor();
    await shot(hosted, 'hosted-sign-up-verify');
    await hosted.getByLabel('Verification code').fill(codeFrom((await outbox(live.t, second, env)).find((m) => m.kind === 'sign_up_verification')!));
    await hosted.getByRole('button', { name: 'Verify and create account' }).click();
    await hosted.waitForURL((url) => url.href.startsWith(back.split('?')[0]!));
    await hosted.waitForSelector('#status[data-signed-in=true]');
    await hosted.close();
  });

  it('SSO: SignIn draws a button per connection, routes an email at its domain to it, and the OIDC round trip signs in', async () => {
    const env = await environment();
    await live.t.setSettings(env.id, { authMethods: { password: true, magicLink: true, emailCode: true, sso: true } });
    const created = await live.t.call({
      method: 'POST',
      url: `/v1/platform/environments/${env.id}/sso-connections`,
      credential: live.t.platformKey,
      payload: { type: 'oidc', name: 'Corp ID', domains: ['corp.test'], issuer: idp.issuer, clientId: 'react-test', clientSecret: 'react-test-secret' },
    });
    expect(created.statusCode, created.body).toBe(201);
    const connection = created.json() as { id: string; redirectUri: string };
    idp.setClient({ clientId: 'react-test', clientSecret: 'react-test-secret', redirectUri: connection.redirectUri });
    const account = `acct-${Math.random().toString(36).slice(2)}`;
    const email = uniqueEmail('sso').replace(/@.*/, '@corp.test');
    idp.accounts.set(account, { email, email_verified: true, given_name: 'Sid', family_name: 'Sso' });

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
    expect(await page.evaluate(() => (window as unknown as { gh: { state: { user: { email: string } } } }).gh.state.user.email)).toBe(email);
    // The one-time token and the SSO mark left the address bar.
    expect(new URL(page.url()).searchParams.has('token')).toBe(false);
    await page.close();

    // The hosted sign-in page draws the same button; the IdP's answer comes back to it, then the
    // handoff to the application.
    const hosted = await browser.newPage({ viewport: { width: 960, height: 720 } });
    const back = app.url({ pk: env.publishableKey, base: live.url, view: 'app' });
    await hosted.goto(`${live.url}/hosted/${env.id}/sign-in?redirect_url=${encodeURIComponent(back)}`);
    await hosted.getByRole('button', { name: 'Continue with Corp ID' }).click();
    await throughIdp(hosted, account);
    await hosted.waitForURL((url) => url.href.startsWith(back.split('?')[0]!));
    await hosted.waitForSelector('#status[data-signed-in=true]');
    await hosted.close();

    // An IdP that does not vouch for the address of an existing account: the refusal comes back to
    // the page and is shown as its message.
    const existing = await createUser(env, uniqueEmail('taken').replace(/@.*/, '@corp.test'));
    const unverified = `acct-${Math.random().toString(36).slice(2)}`;
    idp.accounts.set(unverified, { email: existing.email, email_verified: false });
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
    await live.t.setSettings(env.id, { authMethods: { password: true, magicLink: true, emailCode: true, sso: false } });
    const off = await open(env);
    await off.getByLabel('Password').waitFor();
    expect(await off.getByRole('button', { name: 'Continue with Corp ID' }).count()).toBe(0);
    await off.close();
    await live.t.setSettings(env.id, { authMethods: { password: true, magicLink: true, emailCode: true, sso: true } });

    // The connection goes away while a page still shows it: 422 sso_not_configured, and the
    // password comes back for that email.
    const stale = await open(env);
    await stale.getByRole('button', { name: 'Continue with Corp ID' }).waitFor();
    const removed = await live.t.call({ method: 'DELETE', url: `/v1/platform/environments/${env.id}/sso-connections/${connection.id}`, credential: live.t.platformKey });
    expect(removed.statusCode, removed.body).toBe(200);
    await stale.getByLabel('Email address').fill(email);
    await stale.getByRole('button', { name: 'Continue with Corp ID' }).nth(1).click();
    await stale.getByLabel('Password').waitFor();
    expect(await stale.getByText('corp.test signs in with Corp ID.').count()).toBe(0);
    await stale.close();
  });

  it('invitations: invite from OrganizationProfile, revoke, accept from the emailed link on the hosted page, join from the switcher', async () => {
    const env = await environment();
    const { email } = await createUser(env);
    const page = await open(env);
    await signInWithPassword(page, email);
    await page.waitForSelector('#status[data-signed-in=true]');
    await createActiveOrganization(page, 'Difference Engines');
    await page.waitForSelector('#status[data-org-role=owner]');
    await page.getByRole('button', { name: /Switch organization/ }).click();
    await page.getByRole('menuitem', { name: 'Manage' }).click();
    const manage = page.getByRole('dialog', { name: 'Manage organization' });
    await manage.getByRole('tab', { name: 'Invitations' }).click();
    const newcomer = uniqueEmail('newcomer');
    const gone = uniqueEmail('gone');
    for (const address of [newcomer, gone]) {
      await manage.getByLabel('Email address to invite').fill(address);
      await manage.getByLabel('Role', { exact: true }).selectOption(address === newcomer ? 'admin' : 'member');
      await manage.getByRole('button', { name: 'Send invitation' }).click();
      await manage.getByText(`Invitation sent to ${address}.`).waitFor();
    }
    const pending = manage.getByRole('list', { name: 'Pending invitations' });
    await expect.poll(() => pending.locator('li').count()).toBe(2);
    await shot(page, 'organization-invitations-pending-light');
    await manage.getByRole('button', { name: `Revoke the invitation to ${gone}` }).click();
    await expect.poll(() => pending.locator('li').count()).toBe(1);
    expect(await pending.textContent()).toContain(newcomer);
    await page.keyboard.press('Escape');
    const invite = (to: string, redirectUrl?: string) =>
      page.evaluate(([address, url]) => (window as unknown as { gh: { organization: { invitations: { create(p: object): Promise<unknown> } } } }).gh.organization.invitations.create({ email: address, role: 'member', ...(url ? { redirectUrl: url } : {}) }), [to, redirectUrl] as const);

    // The newcomer opens the emailed link: the hosted accept page, then the organization joined.
    const mail = (await outbox(live.t, newcomer, env)).find((m) => m.kind === 'organization_invitation')!;
    const link = /(https?:\/\/\S+)/.exec(mail.text)![1]!;
    expect(link.startsWith(`${live.url}/hosted/${env.id}/accept-invitation?token=`)).toBe(true);
    const invitee = await browser.newPage({ viewport: { width: 960, height: 720 } });
    invitee.on('pageerror', (error) => console.error('[page error]', error));
    // A forged token is refused on the page with the server's message.
    await invitee.goto(`${live.url}/hosted/${env.id}/accept-invitation?token=not-a-real-token`);
    await invitee.getByRole('button', { name: 'Accept invitation' }).click();
    await expect.poll(() => invitee.locator('[data-gh-component=accept-invitation] .gh-form-error').textContent()).toMatch(/\S/);
    await invitee.goto(link);
    await invitee.getByRole('button', { name: 'Accept invitation' }).waitFor();
    await shot(invitee, 'hosted-accept-invitation');
    // Hosted pages follow the visitor's colour scheme.
    const dark = await browser.newPage({ viewport: { width: 960, height: 720 }, colorScheme: 'dark' });
    await dark.goto(link);
    await dark.getByRole('button', { name: 'Accept invitation' }).waitFor();
    await shot(dark, 'hosted-accept-invitation-dark');
    await dark.close();
    await invitee.getByLabel('First name').fill('Nia');
    await invitee.getByRole('button', { name: 'Accept invitation' }).click();
    await invitee.waitForURL((url) => url.pathname === `/hosted/${env.id}/organization`);
    await invitee.getByRole('button', { name: /Active organization: Difference Engines/ }).waitFor();
    await invitee.close();

    // A signed-in user with a verified address sees the invitation in the switcher and joins.
    const member = await createUser(env, uniqueEmail('switcher'), { emailVerified: true });
    await invite(member.email);
    const joiner = await open(env);
    await signInWithPassword(joiner, member.email);
    await joiner.waitForSelector('#status[data-signed-in=true]');
    await joiner.getByRole('button', { name: /Switch organization/ }).click();
    const join = joiner.getByRole('menuitem', { name: 'Join Difference Engines' });
    await join.waitFor();
    
    await join.click();
    await joiner.waitForSelector('#status[data-org-role=member]');
    await joiner.getByRole('button', { name: /Active organization: Difference Engines/ }).waitFor();

    // An invitation whose link leads to the application's own sign-in page: SignIn accepts it.
    const third = uniqueEmail('third');
    await joiner.close();
    await invite(third, app.url({ pk: env.publishableKey, base: live.url, view: 'sign-in' }));
    await page.close();
    const thirdLink = /(https?:\/\/\S+)/.exec((await outbox(live.t, third, env))[0]!.text)![1]!;
    const thirdPage = await browser.newPage({ viewport: { width: 960, height: 720 } });
    await thirdPage.goto(thirdLink);
    await thirdPage.getByRole('button', { name: 'Accept invitation' }).click();
    await thirdPage.waitForSelector('#status[data-signed-in=true]');
    expect(new URL(thirdPage.url()).searchParams.has('token')).toBe(false);
    expect(await thirdPage.evaluate(() => (window as unknown as { gh: { state: { organizations: { name: string }[] } } }).gh.state.organizations.map((o) => o.name))).toEqual(['Difference Engines']);
    await thirdPage.close();
  });

  it('domains: verified by an emailed code in OrganizationProfile; a colleague at it asks to join from the switcher; an admin accepts', async () => {
    const env = await environment();
    const { email } = await createUser(env);
    const page = await open(env);
    await signInWithPassword(page, email);
    await page.waitForSelector('#status[data-signed-in=true]');
    await createActiveOrganization(page, 'Babbage & Co');
    await page.waitForSelector('#status[data-org-role=owner]');
    await page.getByRole('button', { name: /Switch organization/ }).click();
    await page.getByRole('menuitem', { name: 'Manage' }).click();
    const manage = page.getByRole('dialog', { name: 'Manage organization' });
    await manage.getByRole('tab', { name: 'Domains' }).click();
    const domain = `ui-${Math.random().toString(36).slice(2, 8)}.example`;
    await manage.getByLabel('Domain', { exact: true }).fill(domain);
    await manage.getByLabel('Enrollment', { exact: true }).selectOption('automatic_suggestion');
    // An address elsewhere is refused with the server's message.
    await manage.getByLabel(/Your address at that domain/).fill('it@elsewhere.example');
    await manage.getByRole('button', { name: 'Add domain' }).click();
    await expect.poll(() => manage.locator('input[name=email] ~ .gh-field-error, .gh-form-error').allTextContents().then((t) => t.join(''))).toMatch(/\S/);
    await manage.getByLabel(/Your address at that domain/).fill(`it@${domain}`);
    await manage.getByRole('button', { name: 'Add domain' }).click();
    const codeField = manage.getByLabel(`Code emailed for ${domain}`);
    await codeField.waitFor();
    await codeField.fill(codeFrom((await outbox(live.t, `it@${domain}`, env)).find((m) => m.kind === 'domain_verification')!));
    await manage.getByRole('button', { name: 'Verify' }).click();
    await manage.getByText('Verified', { exact: true }).waitFor();
    await shot(page, 'organization-domains-verified-light');

    // A colleague proves an address at the domain (email code): the switcher suggests the organization.
    const colleague = `bob.${Math.random().toString(36).slice(2, 8)}@${domain}`;
    const other = await browser.newPage({ viewport: { width: 960, height: 720 } });
    await other.goto(app.url({ pk: env.publishableKey, base: live.url, view: 'app' }));
    await other.getByLabel('Email address').fill(colleague);
    await other.getByRole('button', { name: 'Email me a code' }).click();
    await other.getByLabel('Verification code').waitFor();
    await other.getByLabel('Verification code').fill(codeFrom((await outbox(live.t, colleague, env)).find((m) => m.kind === 'sign_up_code')!));
    await other.getByRole('button', { name: 'Verify' }).click();
    await other.waitForSelector('#status[data-signed-in=true]');
    await other.getByRole('button', { name: /Switch organization/ }).click();
    await other.getByRole('menuitem', { name: 'Ask to join Babbage & Co' }).click();
    await other.getByText('Requested').waitFor();

    // The owner sees the request and accepts it; the colleague is then a member.
    await manage.getByRole('tab', { name: 'Invitations' }).click();
    await manage.getByRole('button', { name: `Accept the request of ${colleague}` }).click();
    await expect.poll(() => manage.getByRole('button', { name: `Accept the request of ${colleague}` }).count()).toBe(0);
    await manage.getByRole('tab', { name: 'Members' }).click();
    await manage.getByText(colleague).first().waitFor();
    await other.close();
    await page.close();
  });

  it('writes a screenshot of each component in both themes', async () => {
    const env = await environment();
    const { email } = await createUser(env, uniqueEmail('react'), { emailVerified: true });
    // Another organization invites the user: the switcher lists it with "Join".
    const other = await createUser(env, uniqueEmail('inviter'));
    const org = await live.t.call({ method: 'POST', url: '/v1/organizations', credential: env.secretKey, payload: { name: 'Contoso', ownerId: other.id } });
    expect(org.statusCode, org.body).toBe(201);
    const invited = await live.t.call({ method: 'POST', url: `/v1/organizations/${(org.json() as { id: string }).id}/invitations`, credential: env.secretKey, payload: { email, role: 'member' } });
    expect(invited.statusCode, invited.body).toBe(201);
    for (const theme of ['light', 'dark']) {
      for (const view of ['sign-in', 'sign-up']) {
        const page = await open(env, view, theme);
        await page.waitForSelector(`[data-gh-component=${view}] input[name=email]`);
        await shot(page, `${view}-${theme}`);
        await page.close();
      }
    }
    const page = await open(env);
    await signInWithPassword(page, email);
    await page.waitForSelector('#status[data-signed-in=true]');
    await createActiveOrganization(page, 'Northwind');
    for (const theme of ['light', 'dark']) {
      for (const view of ['user-profile', 'organization-profile', 'create-organization']) {
        await page.goto(app.url({ pk: env.publishableKey, base: live.url, view, theme }));
        await page.waitForSelector(`[data-gh-component=${view}]`);
        await page.waitForTimeout(300);
        await shot(page, `${view}-${theme}`);
        if (view === 'organization-profile') {
          await page.getByRole('tab', { name: 'Invitations' }).click();
          await page.getByText('No pending invitations.').waitFor();
          await shot(page, `organization-invitations-${theme}`);
          await page.getByRole('tab', { name: 'Domains' }).click();
          await page.getByText('No domains yet.').waitFor();
          await shot(page, `organization-domains-${theme}`);
        }
      }
      await page.goto(app.url({ pk: env.publishableKey, base: live.url, view: 'app', theme }));
      await page.getByRole('button', { name: /Account menu/ }).click();
      await shot(page, `user-button-${theme}`);
      await page.keyboard.press('Escape');
      await page.getByRole('button', { name: /Switch organization/ }).click();
      await page.getByRole('menuitem', { name: 'Join Contoso' }).waitFor();
      await shot(page, `organization-switcher-${theme}`);
    }
    await page.close();
  });
});
