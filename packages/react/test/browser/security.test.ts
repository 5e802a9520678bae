import { readFileSync } from 'node:fs';
import jsQR from 'jsqr';
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { testClock } from '../../../server/test/helpers/app.js';
import { totp } from '../../../js/test/helpers/totp.js';
import { chromiumAvailable, GOOD_PASSWORD } from '../helpers.js';
import { reactSuite } from './suite.js';

/** Eleven minutes on the server's clock: the session's last verification is out of the 10-minute window. */
const STALE = 11 * 60_000;

/** UserProfile's two-step verification and API keys, OrganizationProfile's API keys and MFA switch. */
describe.skipIf(!chromiumAvailable())('@gatehouse/react in Chromium: two-step verification and API keys', () => {
  const clock = testClock();
  const { suite, environment, createUser, open, shot, createActiveOrganization, signInWithPassword } = reactSuite({ now: clock.now });

  async function signedIn(env: { publishableKey: string; secretKey: string }) {
    const { email } = await createUser(env);
    const page = await open(env);
    await signInWithPassword(page, email);
    await page.waitForSelector('#status[data-signed-in=true]');
    return page;
  }

  async function view(page: Page, env: { publishableKey: string }, name: string, theme = 'light') {
    await page.goto(suite.app.url({ pk: env.publishableKey, base: suite.live.url, view: name, theme }));
    const component = page.locator(`[data-gh-component=${name}]`);
    await component.waitFor();
    return component;
  }

  const verifyKey = (env: { secretKey: string }, secret: string) =>
    suite.live.t.call({ method: 'POST', url: '/v1/api-keys/verify', credential: env.secretKey, payload: { secret } });

  it('enables TOTP from a QR code, shows and downloads the backup codes, then turns it off after a reverification', async () => {
    const env = await environment();
    const page = await signedIn(env);

    // Dark first: a second "Set up" replaces the pending secret.
    let profile = await view(page, env, 'user-profile', 'dark');
    await profile.getByRole('tab', { name: 'Security' }).click();
    await profile.getByRole('button', { name: 'Set up' }).click();
    await profile.getByRole('img', { name: 'QR code' }).waitFor();
    await shot(page, 'user-profile-totp-setup-dark', { fullPage: true, animations: 'disabled' });

    profile = await view(page, env, 'user-profile');
    await profile.getByRole('tab', { name: 'Security' }).click();
    await profile.getByRole('button', { name: 'Set up' }).click();
    const qr = profile.getByRole('img', { name: 'QR code' });
    await qr.waitFor();
    const secret = (await profile.locator('[data-gh-secret]').getAttribute('data-gh-secret'))!;
    expect(secret).toMatch(/^[A-Z2-7]{32}$/);
    // The key is shown as text too, in groups of four.
    expect((await profile.locator('[data-gh-secret]').textContent())!.replace(/\s/g, '')).toBe(secret);
    // The QR code is drawn here: an inline SVG, nothing fetched from elsewhere.
    expect(await qr.evaluate((svg) => svg.tagName.toLowerCase())).toBe('svg');
    // What Chromium drew reads back, with an independent decoder, as the otpauth URL of this secret.
    const side = 400;
    const pixels = await qr.evaluate(async (svg, px) => {
      const image = new Image();
      image.src = `data:image/svg+xml;base64,${btoa(new XMLSerializer().serializeToString(svg))}`;
      await image.decode();
      const canvas = Object.assign(document.createElement('canvas'), { width: px, height: px });
      const context = canvas.getContext('2d')!;
      context.drawImage(image, 0, 0, px, px);
      return Array.from(context.getImageData(0, 0, px, px).data);
    }, side);
    const decoded = jsQR(Uint8ClampedArray.from(pixels), side, side)?.data;
    expect(decoded).toMatch(new RegExp(`^otpauth://totp/Acme:.+\\?secret=${secret}&issuer=Acme`));
    await shot(page, 'user-profile-totp-setup-light', { fullPage: true, animations: 'disabled' });

    await profile.getByLabel('Code from your app').fill('000000' === totp(secret, clock.now()) ? '111111' : '000000');
    await profile.getByRole('button', { name: 'Turn on' }).click();
    await profile
      .getByText(/The code is not right/)
      .first()
      .waitFor();
    await profile.getByLabel('Code from your app').fill(totp(secret, clock.now()));
    await profile.getByRole('button', { name: 'Turn on' }).click();
    const codes = profile.getByRole('list', { name: 'Backup codes' }).getByRole('listitem');
    await expect.poll(() => codes.count()).toBe(10);
    const shown = await codes.allTextContents();
    for (const code of shown) expect(code).toMatch(/^[a-z0-9]{10}$/);
    await shot(page, 'user-profile-backup-codes-light', { fullPage: true, animations: 'disabled' });
    const [download] = await Promise.all([page.waitForEvent('download'), profile.getByRole('button', { name: 'Download' }).click()]);
    expect(
      readFileSync((await download.path())!, 'utf8')
        .trim()
        .split('\n'),
    ).toEqual(shown);
    await profile.getByRole('button', { name: 'I have saved them' }).click();
    await profile.getByText('10 of 10 left.', { exact: false }).waitFor();
    // Enrolment in a fresh session verified the authenticator: the device list says so at once.
    await expect.poll(() => profile.locator('[data-gh-session]').first().textContent()).toContain('Password + Authenticator app');
    await expect
      .poll(() =>
        page.evaluate(
          () => (window as unknown as { gh: { state: { user: { twoFactorEnabled: boolean } } } }).gh.state.user.twoFactorEnabled,
        ),
      )
      .toBe(true);

    // New codes in the dark theme (the session verified TOTP just now: no question asked).
    profile = await view(page, env, 'user-profile', 'dark');
    await profile.getByRole('tab', { name: 'Security' }).click();
    await profile.getByRole('button', { name: 'New codes' }).click();
    await expect.poll(() => codes.count()).toBe(10);
    expect(await codes.allTextContents()).not.toEqual(shown);
    await shot(page, 'user-profile-backup-codes-dark', { fullPage: true, animations: 'disabled' });
    await profile.getByRole('button', { name: 'I have saved them' }).click();

    // Later: turning it off asks who this is first.
    clock.advance(STALE);
    profile = await view(page, env, 'user-profile');
    await profile.getByRole('tab', { name: 'Security' }).click();
    await profile.getByRole('button', { name: 'Turn off' }).click();
    const prompt = profile.getByRole('group', { name: 'Confirm it’s you' });
    await prompt.waitFor();
    await prompt.getByRole('button', { name: 'Use your authenticator app' }).click();
    await prompt.getByLabel('Authenticator code').fill('123456' === totp(secret, clock.now()) ? '654321' : '123456');
    await prompt.getByRole('button', { name: 'Confirm' }).click();
    await prompt
      .getByText(/The code is not right/)
      .first()
      .waitFor();
    await shot(page, 'user-profile-reverify-light', { fullPage: true, animations: 'disabled' });
    await prompt.getByLabel('Authenticator code').fill(totp(secret, clock.now()));
    await prompt.getByRole('button', { name: 'Confirm' }).click();
    await profile.getByRole('button', { name: 'Set up' }).waitFor();
    await expect(prompt.count()).resolves.toBe(0);
    await expect
      .poll(() =>
        page.evaluate(
          () => (window as unknown as { gh: { state: { user: { twoFactorEnabled: boolean } } } }).gh.state.user.twoFactorEnabled,
        ),
      )
      .toBe(false);

    // The device list names the browser and the factors this session verified.
    const device = profile.locator('[data-gh-session]').first();
    await expect.poll(() => device.textContent()).toMatch(/Chrome on Linux\s*This device/);
    expect(await device.textContent()).toContain('Password + Authenticator app');
    await shot(page, 'user-profile-devices-light', { fullPage: true, animations: 'disabled' });
    await page.close();
  });

  it('creates an API key (asking for the password when the session is stale), shows its secret once, and revokes it', async () => {
    const env = await environment();
    const page = await signedIn(env);
    let profile = await view(page, env, 'user-profile');
    await profile.getByRole('tab', { name: 'API keys' }).click();
    await profile.getByText('No API keys yet.').waitFor();
    await profile.getByLabel('Name').fill('CI deploy');
    await profile.getByLabel('Scopes (optional)').fill('invoices:read, invoices:write');
    await profile.getByLabel('Expires').selectOption({ label: '30 days' });
    await profile.getByRole('button', { name: 'Create key' }).click();
    const secret = (await profile.locator('[data-gh-api-key-secret]').textContent())!;
    expect(secret).toMatch(/^gh_ak_/);
    const verified = await verifyKey(env, secret);
    expect(verified.statusCode).toBe(200);
    expect((verified.json() as { scopes: string[] }).scopes).toEqual(['invoices:read', 'invoices:write']);
    await shot(page, 'user-profile-api-key-created-light', { fullPage: true, animations: 'disabled' });
    await profile.getByRole('button', { name: 'Done' }).click();
    await expect.poll(() => profile.locator('[data-gh-api-key]').count()).toBe(1);
    expect(await profile.locator('[data-gh-api-key]').textContent()).toMatch(/CI deploy.*invoices:read.*Never used.*Expires/);
    expect(await profile.locator('[data-gh-api-key-secret]').count()).toBe(0);

    // Stale: the password first, then the key is made.
    clock.advance(STALE);
    profile = await view(page, env, 'user-profile', 'dark');
    await profile.getByRole('tab', { name: 'API keys' }).click();
    await profile.getByLabel('Name').fill('Laptop script');
    await profile.getByRole('button', { name: 'Create key' }).click();
    const prompt = profile.getByRole('group', { name: 'Confirm it’s you' });
    await prompt.getByLabel('Password').fill(GOOD_PASSWORD);
    await prompt.getByRole('button', { name: 'Confirm' }).click();
    await profile.locator('[data-gh-api-key-secret]').waitFor();
    await shot(page, 'user-profile-api-key-created-dark', { fullPage: true, animations: 'disabled' });
    await profile.getByRole('button', { name: 'Done' }).click();
    await expect.poll(() => profile.locator('[data-gh-api-key]').count()).toBe(2);
    await shot(page, 'user-profile-api-keys-dark', { fullPage: true, animations: 'disabled' });

    await profile.getByRole('button', { name: 'Revoke CI deploy' }).click();
    await expect.poll(() => profile.locator('[data-gh-api-key]').count()).toBe(1);
    expect((await verifyKey(env, secret)).statusCode).toBe(401);
    await page.close();
  });

  it("manages the organization's API keys and its two-step verification rule", async () => {
    const env = await environment();
    const page = await signedIn(env);
    await createActiveOrganization(page, 'Northwind');
    for (const theme of ['dark', 'light']) {
      const org = await view(page, env, 'organization-profile', theme);
      await org.getByRole('tab', { name: 'API keys' }).click();
      await org.getByLabel('Name').fill(`Billing sync ${theme}`);
      await org.getByRole('button', { name: 'Create key' }).click();
      const secret = (await org.locator('[data-gh-api-key-secret]').textContent())!;
      const verified = await verifyKey(env, secret);
      expect((verified.json() as { subject: string }).subject).toMatch(/^org_/);
      await org.getByRole('button', { name: 'Done' }).click();
      await org.locator('[data-gh-api-key]').first().waitFor();
      await shot(page, `organization-api-keys-${theme}`, { fullPage: true, animations: 'disabled' });
      await org.getByRole('button', { name: `Revoke Billing sync ${theme}` }).click();
      await org.getByText('No API keys yet.').waitFor();
      expect((await verifyKey(env, secret)).statusCode).toBe(401);
    }

    // Without a second factor the server refuses, and says why.
    let org = await view(page, env, 'organization-profile');
    await org.getByRole('tab', { name: 'General' }).click();
    const rule = org.getByRole('switch', { name: 'Require two-step verification' });
    await rule.click();
    await org
      .getByRole('alert')
      .filter({ hasText: /second factor|two-step|authenticator/i })
      .waitFor();
    expect(await rule.getAttribute('aria-checked')).toBe('false');
    await shot(page, 'organization-require-mfa-refused-light', { fullPage: true, animations: 'disabled' });

    // With TOTP verified in this session, the switch turns on (and off).
    const setup = await page.evaluate(() =>
      (window as unknown as { gh: { user: { mfa: { totp: { create(): Promise<{ secret: string }> } } } } }).gh.user.mfa.totp.create(),
    );
    const code = totp(setup.secret, clock.now());
    await page.evaluate(
      (c) => (window as unknown as { gh: { user: { mfa: { totp: { verify(c: string): Promise<unknown> } } } } }).gh.user.mfa.totp.verify(c),
      code,
    );
    for (const theme of ['dark', 'light']) {
      org = await view(page, env, 'organization-profile', theme);
      await org.getByRole('tab', { name: 'General' }).click();
      const toggle = org.getByRole('switch', { name: 'Require two-step verification' });
      await toggle.waitFor();
      const before = await toggle.getAttribute('aria-checked');
      await toggle.click();
      await expect.poll(() => toggle.getAttribute('aria-checked')).toBe(before === 'true' ? 'false' : 'true');
      if (theme === 'dark') await shot(page, 'organization-require-mfa-dark', { fullPage: true, animations: 'disabled' });
    }
    const current = await suite.live.t.call({
      method: 'GET',
      url: '/v1/me/organization',
      credential: await page.evaluate(() => (window as unknown as { gh: { getToken(): Promise<string> } }).gh.getToken()),
    });
    expect((current.json() as { mfaRequired: boolean }).mfaRequired).toBe(false);
    await page.close();
  });
});
