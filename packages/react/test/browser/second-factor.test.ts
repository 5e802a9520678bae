import { describe, expect, it } from 'vitest';
import { base32Encode } from '../../../server/src/mfa/totp.js';
import { signIn } from '../../../server/test/helpers/identity.js';
import { enableTotp, totpCode } from '../../../server/test/helpers/mfa.js';
import { chromiumAvailable, GOOD_PASSWORD, uniqueEmail } from '../helpers.js';
import { reactSuite } from './suite.js';

const SECRET = base32Encode(Buffer.from('a browser test secret'));

/** The second factor in SignIn and on the hosted sign-in page: a TOTP code, a backup code, and the setup under mfa "required". */
describe.skipIf(!chromiumAvailable())('@gatehouse/react in Chromium: the second factor', () => {
  const { suite, environment, createUser, open, shot, signInWithPassword } = reactSuite();

  it('a password, then the TOTP code: signed in only after the code', async () => {
    const env = await environment();
    const { email } = await createUser(env, uniqueEmail('totp'), { emailVerified: true, totpSecret: SECRET });
    const page = await open(env);
    await signInWithPassword(page, email);
    await page.getByLabel('Authenticator code').waitFor();
    expect(await page.locator('#status').getAttribute('data-signed-in')).toBe('false');
    await shot(page, 'sign-in-second-factor-light');
    await page.getByLabel('Authenticator code').fill(totpCode(SECRET));
    await page.getByRole('button', { name: 'Verify' }).click();
    await page.waitForSelector('#status[data-signed-in=true]');
    await page.close();
  });

  it('"Use a backup code" switches the step to a backup code, which signs in', async () => {
    const env = await environment();
    const { email } = await createUser(env, uniqueEmail('backup'), { emailVerified: true });
    const session = (await signIn(suite.live.t, email, GOOD_PASSWORD, env)).json() as { session: { accessToken: string } };
    const { backupCodes } = await enableTotp(suite.live.t, session.session.accessToken);
    const page = await open(env, 'app', 'dark');
    await signInWithPassword(page, email);
    await page.getByRole('button', { name: 'Use a backup code' }).click();
    await page.getByLabel('Backup code').fill('not-a-code');
    await page.getByRole('button', { name: 'Verify' }).click();
    const error = page.locator('[data-gh-component=sign-in] input[name=code] ~ .gh-field-error');
    await expect.poll(() => error.textContent()).toMatch(/backup code/i);
    await shot(page, 'sign-in-backup-code-dark');
    await page.getByLabel('Backup code').fill(backupCodes[0]!);
    await page.getByRole('button', { name: 'Verify' }).click();
    await page.waitForSelector('#status[data-signed-in=true]');
    await page.close();
  });

  it('under mfa "required": the authenticator is set up from a QR code, the backup codes are shown once, then signed in', async () => {
    const env = await environment();
    await suite.live.t.setSettings(env.id, { mfa: 'required' });
    // The dark theme's screenshot, from another user still without a second factor.
    const other = await createUser(env, uniqueEmail('setup-dark'));
    const dark = await open(env, 'app', 'dark');
    await signInWithPassword(dark, other.email);
    await dark.locator('svg.gh-qr').waitFor();
    await shot(dark, 'sign-in-totp-setup-dark');
    await dark.close();

    const { email } = await createUser(env, uniqueEmail('setup'));
    const page = await open(env);
    // The test application runs under StrictMode, which mounts the step twice: one secret must be asked for.
    const setups: string[] = [];
    page.on('request', (request) => {
      if (request.method() === 'POST' && request.url().includes('/totp-setup')) setups.push(request.url());
    });
    await signInWithPassword(page, email);
    await page.locator('svg.gh-qr').waitFor();
    await shot(page, 'sign-in-totp-setup-light');
    const secret = (await page.locator('[data-gh-totp-secret]').textContent())!.replace(/\s/g, '');
    await page.getByLabel('Authenticator code').fill(totpCode(secret));
    await page.getByRole('button', { name: 'Verify and continue' }).click();
    const codes = page.locator('.gh-codes li');
    await expect.poll(() => codes.count()).toBe(10);
    expect(setups).toHaveLength(1);
    // Still signed out while the codes are on screen: the session waits for "continue".
    expect(await page.locator('#status').getAttribute('data-signed-in')).toBe('false');
    await shot(page, 'sign-in-backup-codes-light');
    await page.getByRole('button', { name: 'I saved them, continue' }).click();
    await page.waitForSelector('#status[data-signed-in=true]');
    await page.close();
  });

  it('hosted sign-in asks for the TOTP code before it hands the session to the application', async () => {
    const env = await environment();
    const { email } = await createUser(env, uniqueEmail('hosted-totp'), { emailVerified: true, totpSecret: SECRET });
    const page = await suite.browser.newPage({ viewport: { width: 960, height: 720 } });
    page.on('pageerror', (error) => console.error('[page error]', error));
    const back = suite.app.url({ pk: env.publishableKey, base: suite.live.url, view: 'app' });
    await page.goto(`${suite.live.url}/hosted/${env.id}/sign-in?redirect_url=${encodeURIComponent(back)}`);
    await signInWithPassword(page, email);
    await page.getByLabel('Authenticator code').waitFor();
    // No handoff yet: still on the hosted page.
    expect(page.url()).toContain('/hosted/');
    await shot(page, 'hosted-sign-in-second-factor');
    await page.getByLabel('Authenticator code').fill(totpCode(SECRET));
    await page.getByRole('button', { name: 'Verify' }).click();
    await page.waitForURL((url) => url.href.startsWith(back.split('?')[0]!));
    await page.waitForSelector('#status[data-signed-in=true]');
    await page.close();
  });
});
