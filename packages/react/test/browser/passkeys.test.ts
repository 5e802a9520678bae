import type { CDPSession, Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { testClock } from '../../../server/test/helpers/app.js';
import { chromiumAvailable, errorCodesOf } from '../helpers.js';
import { reactSuite } from './suite.js';

/**
 * Passkeys end to end in Chromium, with a virtual authenticator (CDP WebAuthn domain: a platform
 * authenticator with resident keys and user verification). The page is on http://localhost:<port>,
 * a secure context whose RP ID is "localhost"; Gatehouse itself is on 127.0.0.1.
 */
describe.skipIf(!chromiumAvailable())('@gatehouse/react in Chromium: passkeys', () => {
  // The server's clock, so that a session can be made stale (more than 10 minutes since it verified).
  const clock = testClock();
  const { suite, environment, createUser, shot, signInWithPassword } = reactSuite({ now: clock.now });

  async function localPage(env: { publishableKey: string }, view: string, theme = 'light', page?: Page): Promise<Page> {
    const target = page ?? (await suite.browser.newPage({ viewport: { width: 960, height: 720 } }));
    if (!page) target.on('pageerror', (error) => console.error('[page error]', error));
    const url = suite.app
      .url({ pk: env.publishableKey, base: suite.live.url, view, theme })
      .replace('http://127.0.0.1:', 'http://localhost:');
    await target.goto(url);
    await target.waitForSelector('#status[data-loaded=true]');
    return target;
  }

  async function virtualAuthenticator(page: Page): Promise<{ cdp: CDPSession; authenticatorId: string }> {
    const cdp = await page.context().newCDPSession(page);
    await cdp.send('WebAuthn.enable', { enableUI: false });
    const { authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', {
      options: {
        protocol: 'ctap2',
        transport: 'internal',
        hasResidentKey: true,
        hasUserVerification: true,
        isUserVerified: true,
        automaticPresenceSimulation: true,
      },
    });
    return { cdp, authenticatorId };
  }

  async function signOut(page: Page) {
    await page.evaluate(() => (window as unknown as { gh: { signOut(): Promise<unknown> } }).gh.signOut());
    await page.waitForSelector('#status[data-signed-in=false]');
  }

  it('registers a passkey in UserProfile, then signs in with the passkey button and with autofill', async () => {
    const env = await environment();
    await suite.live.t.setSettings((env as unknown as { id: string }).id, { authMethods: { passkey: true } });
    const { email, id: userId } = await createUser(env);

    const page = await localPage(env, 'app');
    const { cdp, authenticatorId } = await virtualAuthenticator(page);
    await signInWithPassword(page, email);
    await page.waitForSelector('#status[data-signed-in=true]');

    // UserProfile → Security → Add a passkey.
    await localPage(env, 'user-profile', 'light', page);
    await page.getByRole('tab', { name: 'Security' }).click();
    const section = page.locator('[data-gh-section=passkeys]');
    await section.getByRole('button', { name: 'Add a passkey' }).click();
    await expect.poll(() => section.locator('li').count()).toBe(1);
    const { credentials } = await cdp.send('WebAuthn.getCredentials', { authenticatorId });
    expect(credentials).toHaveLength(1);
    expect(credentials[0]!.isResidentCredential).toBe(true);
    // The authenticator stores the random user handle, never the user id.
    expect(Buffer.from(credentials[0]!.userHandle!, 'base64').toString('utf8')).not.toContain(userId);
    await shot(page, 'passkeys-profile-light');

    // Rename it.
    await section.getByRole('button', { name: 'Rename' }).click();
    await section.getByLabel('Passkey name').fill('This laptop');
    await section.getByRole('button', { name: 'Save' }).click();
    await expect.poll(() => section.locator('li .gh-name').first().textContent()).toContain('This laptop');
    await localPage(env, 'user-profile', 'dark', page);
    await page.getByRole('tab', { name: 'Security' }).click();
    await expect.poll(() => page.locator('[data-gh-section=passkeys] li').count()).toBe(1);
    await shot(page, 'passkeys-profile-dark');

    // Signed out, with the authenticator's presence off: the autofill request stays pending (as
    // while the user has not picked anything), the page stays signed out, and the button signs in.
    await signOut(page);
    const presence = (enabled: boolean) => cdp.send('WebAuthn.setAutomaticPresenceSimulation', { authenticatorId, enabled });
    await presence(false);
    await localPage(env, 'sign-in', 'dark', page);
    const button = page.getByRole('button', { name: 'Sign in with a passkey' });
    await button.waitFor();
    expect(await page.locator('[data-gh-component=sign-in] input[name=email]').getAttribute('autocomplete')).toBe('username webauthn');
    await shot(page, 'passkeys-sign-in-dark');
    await localPage(env, 'sign-in', 'light', page);
    await page.getByRole('button', { name: 'Sign in with a passkey' }).waitFor();
    await shot(page, 'passkeys-sign-in-light');
    expect(await page.locator('#status').getAttribute('data-signed-in')).toBe('false');
    await presence(true);
    await page.getByRole('button', { name: 'Sign in with a passkey' }).click();
    await page.waitForSelector('#status[data-signed-in=true]');
    const secretKey = (env as unknown as { secretKey: string }).secretKey;
    const used = await suite.live.t.call({ method: 'GET', url: `/v1/users/${userId}/passkeys`, credential: secretKey });
    expect((used.json() as { data: Array<{ lastUsedAt: number | null }> }).data[0]!.lastUsedAt).not.toBeNull();

    // Autofill: with presence on, the virtual authenticator answers the page's conditional request
    // as a user picking the passkey in the email field's autofill: signed in without a click.
    await signOut(page);
    await localPage(env, 'sign-in', 'light', page);
    await page.waitForSelector('#status[data-signed-in=true]');
    expect(errorCodesOf(suite.live, env.id).filter((code) => code !== 'reverification_required')).toEqual([]);
    await page.close();
  });

  it('under mfa "optional", a password then the passkey as the second factor: signed in only after the passkey', async () => {
    const env = await environment();
    const { email, id: userId } = await createUser(env);
    const secretKey = (env as unknown as { secretKey: string }).secretKey;

    // The passkey, made with the fresh sign-in's session (authMethods.passkey stays off: a second factor only).
    const page = await localPage(env, 'app');
    const { cdp, authenticatorId } = await virtualAuthenticator(page);
    await signInWithPassword(page, email);
    await page.waitForSelector('#status[data-signed-in=true]');
    await page.evaluate(() =>
      (window as unknown as { gh: { user: { passkeys: { create(): Promise<unknown> } } } }).gh.user.passkeys.create(),
    );
    expect((await cdp.send('WebAuthn.getCredentials', { authenticatorId })).credentials).toHaveLength(1);
    await signOut(page);

    for (const theme of ['dark', 'light']) {
      await localPage(env, 'app', theme, page);
      await signInWithPassword(page, email);
      const button = page.locator('[data-gh-step=second-factor]').getByRole('button', { name: 'Use a passkey' });
      await button.waitFor();
      // The password alone signed nothing in; no code field, as the passkey is the only second factor.
      expect(await page.locator('#status').getAttribute('data-signed-in')).toBe('false');
      expect(await page.locator('[data-gh-step=second-factor] input').count()).toBe(0);
      await shot(page, `sign-in-second-factor-passkey-${theme}`);
      await button.click();
      await page.waitForSelector('#status[data-signed-in=true]');
      if (theme === 'dark') await signOut(page);
    }

    // The session verified the password, then the passkey; the passkey's use is recorded.
    const token = await page.evaluate(() => (window as unknown as { gh: { getToken(): Promise<string | null> } }).gh.getToken());
    const claims = JSON.parse(Buffer.from(token!.split('.')[1]!, 'base64url').toString('utf8')) as { amr: string[]; fva: number[] };
    expect(claims.amr).toEqual(['pwd', 'passkey']);
    expect(claims.fva).toEqual([0, 0]);
    const used = await suite.live.t.call({ method: 'GET', url: `/v1/users/${userId}/passkeys`, credential: secretKey });
    expect((used.json() as { data: Array<{ lastUsedAt: number | null }> }).data[0]!.lastUsedAt).not.toBeNull();
    expect(errorCodesOf(suite.live, env.id).filter((code) => code !== 'reverification_required')).toEqual([]);
    await page.close();
  });

  it('SignIn with passkeys as the only method shows the passkey button, which signs in', async () => {
    const env = await environment();
    const { email } = await createUser(env);
    const page = await localPage(env, 'app');
    const { cdp, authenticatorId } = await virtualAuthenticator(page);
    await signInWithPassword(page, email);
    await page.waitForSelector('#status[data-signed-in=true]');
    await page.evaluate(() =>
      (window as unknown as { gh: { user: { passkeys: { create(): Promise<unknown> } } } }).gh.user.passkeys.create(),
    );
    expect((await cdp.send('WebAuthn.getCredentials', { authenticatorId })).credentials).toHaveLength(1);
    await signOut(page);

    const id = (env as unknown as { id: string }).id;
    await suite.live.t.setSettings(id, { authMethods: { password: false, emailCode: false, magicLink: false, sso: false, passkey: true } });
    await localPage(env, 'sign-in', 'light', page);
    const card = page.locator('[data-gh-component=sign-in]');
    await card.getByRole('button', { name: 'Sign in with a passkey' }).waitFor();
    expect(await card.textContent()).not.toMatch(/no sign-in method/i);
    expect(await card.locator('input').count()).toBe(0);
    await card.getByRole('button', { name: 'Sign in with a passkey' }).click();
    await page.waitForSelector('#status[data-signed-in=true]');
    await page.close();
  });

  it('a stale session removes a passkey after confirming with the passkey in the prompt', async () => {
    const env = await environment();
    const { email, id: userId } = await createUser(env);
    const page = await localPage(env, 'app');
    await virtualAuthenticator(page);
    await signInWithPassword(page, email);
    await page.waitForSelector('#status[data-signed-in=true]');
    await page.evaluate(() =>
      (window as unknown as { gh: { user: { passkeys: { create(): Promise<unknown> } } } }).gh.user.passkeys.create(),
    );

    clock.advance(11 * 60_000);
    await localPage(env, 'user-profile', 'light', page);
    await page.getByRole('tab', { name: 'Security' }).click();
    const section = page.locator('[data-gh-section=passkeys]');
    await expect.poll(() => section.locator('li').count()).toBe(1);
    await section.getByRole('button', { name: /^Remove / }).click();
    const prompt = section.getByRole('group', { name: 'Confirm it’s you' });
    await prompt.getByRole('button', { name: 'Use a passkey' }).click(); // the link: passkey instead of the password
    await prompt.getByRole('button', { name: 'Use a passkey' }).click(); // the confirmation
    await expect.poll(() => section.locator('li').count()).toBe(0);
    const left = await suite.live.t.call({
      method: 'GET',
      url: `/v1/users/${userId}/passkeys`,
      credential: (env as unknown as { secretKey: string }).secretKey,
    });
    expect((left.json() as { data: unknown[] }).data).toEqual([]);
    await page.close();
  });

  it('under mfa "required", "Set up a passkey" at the setup step registers one and signs in (no backup codes)', async () => {
    const env = await environment();
    const id = (env as unknown as { id: string }).id;
    await suite.live.t.setSettings(id, { mfa: 'required' });
    const { email, id: userId } = await createUser(env);
    const page = await localPage(env, 'app');
    const { cdp, authenticatorId } = await virtualAuthenticator(page);
    await signInWithPassword(page, email);
    const button = page.getByRole('button', { name: 'Set up a passkey' });
    await button.waitFor();
    expect(await page.locator('#status').getAttribute('data-signed-in')).toBe('false');
    await button.click();
    await page.waitForSelector('#status[data-signed-in=true]');
    expect(await page.locator('.gh-codes').count()).toBe(0);
    expect((await cdp.send('WebAuthn.getCredentials', { authenticatorId })).credentials).toHaveLength(1);
    const secretKey = (env as unknown as { secretKey: string }).secretKey;
    const listed = await suite.live.t.call({ method: 'GET', url: `/v1/users/${userId}/passkeys`, credential: secretKey });
    expect((listed.json() as { data: unknown[] }).data).toHaveLength(1);
    await page.close();
  });
});
