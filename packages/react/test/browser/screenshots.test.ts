import { describe, expect, it } from 'vitest';
import { chromiumAvailable, uniqueEmail } from '../helpers.js';
import { reactSuite } from './suite.js';

/** A screenshot of each component in both themes, for docs/react-components.md. */
describe.skipIf(!chromiumAvailable())('@gatehouse/react in Chromium: screenshots', () => {
  const { suite, environment, createUser, open, shot, createActiveOrganization, signInWithPassword } = reactSuite();

  it('writes a screenshot of each component in both themes', async () => {
    const env = await environment();
    const { email } = await createUser(env, uniqueEmail('react'), { emailVerified: true });
    // Another organization invites the user: the switcher lists it with "Join".
    const other = await createUser(env, uniqueEmail('inviter'));
    const org = await suite.live.t.call({
      method: 'POST',
      url: '/v1/organizations',
      credential: env.secretKey,
      payload: { name: 'Contoso', ownerId: other.id },
    });
    expect(org.statusCode, org.body).toBe(201);
    const invited = await suite.live.t.call({
      method: 'POST',
      url: `/v1/organizations/${(org.json() as { id: string }).id}/invitations`,
      credential: env.secretKey,
      payload: { email, role: 'member' },
    });
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
        await page.goto(suite.app.url({ pk: env.publishableKey, base: suite.live.url, view, theme }));
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
      await page.goto(suite.app.url({ pk: env.publishableKey, base: suite.live.url, view: 'app', theme }));
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
