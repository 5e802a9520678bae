import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { chromiumAvailable, codeFrom, GOOD_PASSWORD, makePng, outbox, uniqueEmail } from '../helpers.js';
import { reactSuite } from './suite.js';

/** UserButton and UserProfile, then OrganizationSwitcher and OrganizationProfile: members, invitations, domains. */
describe.skipIf(!chromiumAvailable())('@gatehouse/react in Chromium: the account and organizations', () => {
  const { suite, environment, createUser, open, shot, createActiveOrganization, signInWithPassword } = reactSuite();

  it('user button and profile: edit the name, upload an avatar that is then shown, change the password', async () => {
    const env = await environment();
    const { email } = await createUser(env);
    const page = await open(env);
    await signInWithPassword(page, email);
    await page.getByRole('button', { name: /Account menu for Ada Lovelace/ }).click();
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
    await shot(page, 'user-profile-avatar-light');
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
    const members = await suite.live.t.call({
      method: 'GET',
      url: `/v1/me/organization/members`,
      credential: await page.evaluate(() => (window as unknown as { gh: { getToken(): Promise<string> } }).gh.getToken()),
    });
    expect((members.json() as { data: { email: string; role: string }[] }).data.find((m) => m.email === other.email)?.role).toBe('admin');
    await shot(page, 'organization-members-light');
    await page.close();
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
      page.evaluate(
        ([address, url]) =>
          (
            window as unknown as { gh: { organization: { invitations: { create(p: object): Promise<unknown> } } } }
          ).gh.organization.invitations.create({ email: address, role: 'member', ...(url ? { redirectUrl: url } : {}) }),
        [to, redirectUrl] as const,
      );

    // The newcomer opens the emailed link: the hosted accept page, then the organization joined.
    const mail = (await outbox(suite.live.t, newcomer, env)).find((m) => m.kind === 'organization_invitation')!;
    const link = /(https?:\/\/\S+)/.exec(mail.text)![1]!;
    expect(link.startsWith(`${suite.live.url}/hosted/${env.id}/accept-invitation?token=`)).toBe(true);
    const invitee = await suite.browser.newPage({ viewport: { width: 960, height: 720 } });
    invitee.on('pageerror', (error) => console.error('[page error]', error));
    // A forged token is refused on the page with the server's message.
    await invitee.goto(`${suite.live.url}/hosted/${env.id}/accept-invitation?token=not-a-real-token`);
    await invitee.getByRole('button', { name: 'Accept invitation' }).click();
    await expect.poll(() => invitee.locator('[data-gh-component=accept-invitation] .gh-form-error').textContent()).toMatch(/\S/);
    await invitee.goto(link);
    await invitee.getByRole('button', { name: 'Accept invitation' }).waitFor();
    // The page shows the organization and the invited address, masked, before accepting.
    await expect.poll(() => invitee.locator('[data-gh-invitation-preview]').textContent()).toContain(`${newcomer[0]}***@`);
    await shot(invitee, 'hosted-accept-invitation');
    // Hosted pages follow the visitor's colour scheme.
    const dark = await suite.browser.newPage({ viewport: { width: 960, height: 720 }, colorScheme: 'dark' });
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
    await invite(third, suite.app.url({ pk: env.publishableKey, base: suite.live.url, view: 'sign-in' }));
    await page.close();
    const thirdLink = /(https?:\/\/\S+)/.exec((await outbox(suite.live.t, third, env))[0]!.text)![1]!;
    const thirdPage = await suite.browser.newPage({ viewport: { width: 960, height: 720 } });
    await thirdPage.goto(thirdLink);
    await thirdPage.getByRole('button', { name: 'Accept invitation' }).click();
    await thirdPage.waitForSelector('#status[data-signed-in=true]');
    expect(await thirdPage.evaluate(() => new URLSearchParams(location.search).has('token'))).toBe(false);
    // The organizations load after the signed-in mark: the state may trail it.
    await expect
      .poll(() =>
        thirdPage.evaluate(() =>
          (window as unknown as { gh: { state: { organizations: { name: string }[] } } }).gh.state.organizations.map((o) => o.name),
        ),
      )
      .toEqual(['Difference Engines']);
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
    await expect
      .poll(() =>
        manage
          .locator('input[name=email] ~ .gh-field-error, .gh-form-error')
          .allTextContents()
          .then((t) => t.join('')),
      )
      .toMatch(/\S/);
    await manage.getByLabel(/Your address at that domain/).fill(`it@${domain}`);
    await manage.getByRole('button', { name: 'Add domain' }).click();
    const codeField = manage.getByLabel(`Code emailed for ${domain}`);
    await codeField.waitFor();
    await codeField.fill(codeFrom((await outbox(suite.live.t, `it@${domain}`, env)).find((m) => m.kind === 'domain_verification')!));
    await manage.getByRole('button', { name: 'Verify' }).click();
    await manage.getByText('Verified', { exact: true }).waitFor();
    await shot(page, 'organization-domains-verified-light');

    // A colleague proves an address at the domain (email code): the switcher suggests the organization.
    const colleague = `bob.${Math.random().toString(36).slice(2, 8)}@${domain}`;
    const other = await suite.browser.newPage({ viewport: { width: 960, height: 720 } });
    await other.goto(suite.app.url({ pk: env.publishableKey, base: suite.live.url, view: 'app' }));
    await other.getByLabel('Email address').fill(colleague);
    await other.getByRole('button', { name: 'Email me a code' }).click();
    await other.getByLabel('Verification code').waitFor();
    await other
      .getByLabel('Verification code')
      .fill(codeFrom((await outbox(suite.live.t, colleague, env)).find((m) => m.kind === 'sign_up_code')!));
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
});
