import { describe, expect, it } from 'vitest';
import { chromiumAvailable, codeFrom, GOOD_PASSWORD, outbox, uniqueEmail } from '../helpers.js';
import { reactSuite } from './suite.js';

/** SignIn and SignUp with each method, loading without a flash of the signed-out UI, and the hosted sign-in and sign-up pages with their handoff. */
describe.skipIf(!chromiumAvailable())('@gatehouse/react in Chromium: sign-in, sign-up and the hosted pages', () => {
  const { suite, environment, createUser, open, shot, signInWithPassword } = reactSuite();

  it('signs up, signs out, and signs in with a password; a wrong password is shown next to its field', async () => {
    const env = await environment();
    const page = await open(env, 'sign-up');
    await page.waitForSelector('[data-gh-component=sign-up] input[name=email]');
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

    await page.goto(suite.app.url({ pk: env.publishableKey, base: suite.live.url, view: 'app' }));
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
    const mail = (await outbox(suite.live.t, email, env)).find((m) => m.kind === 'email_code' || /code/i.test(m.subject))!;
    await page.getByLabel('Verification code').fill(codeFrom(mail));
    await page.getByRole('button', { name: 'Verify' }).click();
    await page.waitForSelector('#status[data-signed-in=true]');
    await page.close();

    await suite.live.t.setSettings(env.id, { authMethods: { emailCode: false, magicLink: false } });
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
    const mail = (await outbox(suite.live.t, email, env)).find((m) => m.kind === 'magic_link')!;
    const link = /(https?:\/\/\S+)/.exec(mail.text)![1]!;
    expect(new URL(link).origin).toBe(new URL(page.url()).origin);
    await page.goto(link);
    await page.waitForSelector('#status[data-signed-in=true]');
    // The one-time token left the address bar.
    expect(await page.evaluate(() => new URLSearchParams(location.search).has('token'))).toBe(false);
    await page.close();
  });

  it('hosted sign-in page: signs in and hands the session back to the application (#__gh_handoff)', async () => {
    const env = await environment();
    const { email } = await createUser(env);
    const page = await suite.browser.newPage({ viewport: { width: 960, height: 720 } });
    page.on('pageerror', (error) => console.error('[page error]', error));
    const back = suite.app.url({ pk: env.publishableKey, base: suite.live.url, view: 'app' });
    await page.goto(`${suite.live.url}/hosted/${env.id}/sign-in?redirect_url=${encodeURIComponent(back)}`);
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
    const page = await suite.browser.newPage({ viewport: { width: 960, height: 720 } });
    await page.goto(`${suite.live.url}/hosted/${env.id}/sign-in?redirect_url=${encodeURIComponent('https://evil.example.com/steal')}`);
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
    await suite.live.t.setSettings(env.id, { emailVerification: 'required' });
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
    const codes = async () => (await outbox(suite.live.t, email, env)).filter((m) => m.kind === 'sign_up_verification');
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
    // The user arrives with the session's state, which may trail the signed-in mark by a render (seen once in CI).
    await expect
      .poll(() => page.evaluate(() => (window as unknown as { gh: { state: { user: { emailVerified: boolean } | null } } }).gh.state.user?.emailVerified ?? null))
      .toBe(true);
    await page.close();

    // The hosted sign-up page on the same environment: the code step, then the handoff back.
    const hosted = await suite.browser.newPage({ viewport: { width: 960, height: 720 } });
    hosted.on('pageerror', (error) => console.error('[page error]', error));
    const back = suite.app.url({ pk: env.publishableKey, base: suite.live.url, view: 'app' });
    await hosted.goto(`${suite.live.url}/hosted/${env.id}/sign-up?redirect_url=${encodeURIComponent(back)}`);
    const second = uniqueEmail('hosted-verify');
    await hosted.getByLabel('Email address').fill(second);
    await hosted.getByLabel('Password').fill(GOOD_PASSWORD);
    await hosted.getByRole('button', { name: 'Create account' }).click();
    await hosted.getByLabel('Verification code').waitFor();
    await shot(hosted, 'hosted-sign-up-verify');
    await hosted
      .getByLabel('Verification code')
      .fill(codeFrom((await outbox(suite.live.t, second, env)).find((m) => m.kind === 'sign_up_verification')!));
    await hosted.getByRole('button', { name: 'Verify and create account' }).click();
    await hosted.waitForURL((url) => url.href.startsWith(back.split('?')[0]!));
    await hosted.waitForSelector('#status[data-signed-in=true]');
    await hosted.close();
  });
});
