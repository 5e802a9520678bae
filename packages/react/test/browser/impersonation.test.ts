import { describe, expect, it } from 'vitest';
import { chromiumAvailable } from '../helpers.js';
import { reactSuite } from './suite.js';

/** The hosted actor page (an actor token's url) and the banner an impersonated session shows. */
describe.skipIf(!chromiumAvailable())('@gatehouse/react in Chromium: impersonation', () => {
  const { suite, environment, createUser, shot } = reactSuite();

  it('the actor url signs in as the user, hands off to the application, which shows the banner until sign-out; a used url is refused', async () => {
    const env = await environment();
    const user = await createUser(env);
    const minted = await suite.live.t.call({
      method: 'POST',
      url: '/v1/actor-tokens',
      credential: env.secretKey,
      payload: { userId: user.id, actor: { sub: 'support:grace' } },
    });
    expect(minted.statusCode, minted.body).toBe(201);
    const { url } = minted.json() as { url: string };
    expect(url.startsWith(`${suite.live.url}/hosted/${env.id}/actor?token=`)).toBe(true);

    const page = await suite.browser.newPage({ viewport: { width: 960, height: 720 } });
    page.on('pageerror', (error) => console.error('[page error]', error));
    const back = suite.app.url({ pk: env.publishableKey, base: suite.live.url, view: 'app' });
    await page.goto(`${url}&redirect_url=${encodeURIComponent(back)}`);
    await page.waitForURL((current) => current.href.startsWith(back.split('?')[0]!));
    await page.waitForSelector('#status[data-signed-in=true]');
    expect(await page.locator('#status').getAttribute('data-actor')).toBe('support:grace');
    const banner = page.locator('[data-gh-component=impersonation-banner]');
    await banner.waitFor();
    await expect.poll(() => banner.textContent()).toBe('You are signed in as Ada Lovelace, impersonated by support:graceSign out');
    await shot(page, 'impersonation-banner-light');
    await page.goto(suite.app.url({ pk: env.publishableKey, base: suite.live.url, view: 'app', theme: 'dark' }));
    await banner.waitFor();
    await shot(page, 'impersonation-banner-dark');

    await banner.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForSelector('#status[data-signed-in=false]');
    expect(await banner.count()).toBe(0);

    // The token was spent: the same url now says so, and signs no one in.
    await page.goto(url);
    const refused = page.locator('[data-gh-component=hosted-refused]');
    await refused.waitFor();
    expect(await refused.textContent()).toMatch(/invalid, expired or already used/);
    // The token left the address bar.
    expect(new URL(page.url()).searchParams.has('token')).toBe(false);
    await shot(page, 'hosted-actor-refused');
    await page.close();
  });
});
