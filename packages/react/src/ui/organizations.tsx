import { useCallback, useEffect, useState } from 'react';
import type { Member } from '@gatehouse/js';
import { useGatehouse, useGatehouseState, type Appearance } from '../context.js';
import { useOrganization, useOrganizationList } from '../hooks.js';
import { ApiKeysSection } from './api-keys.js';
import { useMenu } from './menu.js';
import { DomainsTab } from './organization-domains.js';
import { InvitationsTab, PendingOrganizations, usePendingOrganizations } from './organization-invitations.js';
import { RequireMfa } from './organization-mfa.js';
import { Avatar, displayName, Field, FORM, FormError, go, Header, Root, Submit, useForm } from './primitives.js';
import { Tabs, type TabDef } from './tabs.js';
import { Dialog, Icon } from './user-button.js';

export interface OrganizationSwitcherProps {
  /** Offer "Personal account" (acting as no organization). Default true. */
  hidePersonal?: boolean;
  /** A page with <CreateOrganization/>; without it the form opens in a dialog. */
  createOrganizationUrl?: string;
  /** A page with <OrganizationProfile/>; without it "Manage" opens it in a dialog. */
  organizationProfileUrl?: string;
  appearance?: Appearance;
}

/**
 * The active organization, a menu to switch among the user's organizations, create and manage,
 * and to join those that invited the user or that a verified domain suggests.
 */
export function OrganizationSwitcher(props: OrganizationSwitcherProps) {
  const state = useGatehouseState();
  const { organizations, setActive } = useOrganizationList();
  const menu = useMenu();
  const [dialog, setDialog] = useState<'create' | 'manage' | null>(null);
  const form = useForm([]);
  const pending = usePendingOrganizations(menu.open);
  if (!state.isSignedIn || !state.user) return null;
  const active = state.session?.organizationId ? (organizations.find((o) => o.id === state.session?.organizationId) ?? state.organization) : null;
  const personal = displayName(state.user);
  const choose = (id: string | null) => {
    menu.close();
    void form.submit(() => setActive(id))();
  };
  return (
    <Root appearance={props.appearance}>
      <div className="gh-popover-anchor" ref={menu.anchor} onKeyDown={menu.onKeyDown} data-gh-component="organization-switcher">
        <button ref={menu.trigger} type="button" className="gh-trigger gh-org" aria-haspopup="menu" aria-expanded={menu.open} aria-label={`Active organization: ${active?.name ?? 'Personal account'}. Switch organization`} onClick={() => menu.setOpen(!menu.open)}>
          <span className="gh-row" style={{ gap: 8, minWidth: 0 }}>
            {active ? <Avatar imageUrl={active.imageUrl} name={active.name} size={24} square /> : <Avatar imageUrl={state.user.imageUrl} name={personal} size={24} />}
            <span className="gh-name gh-ellipsis">{active?.name ?? 'Personal account'}</span>
          </span>
          {form.busy ? <span className="gh-spinner" aria-label="Switching" /> : <Icon d="M7 10l5 5 5-5" />}
        </button>
        {menu.open ? (
          <div className="gh-menu gh-start" role="menu" aria-label="Organizations">
            {active ? (
              <div className="gh-menu-header">
                <Avatar imageUrl={active.imageUrl} name={active.name} size={36} square />
                <div style={{ flex: 1, minWidth: 0 }}>
                  <div className="gh-name gh-ellipsis">{active.name}</div>
                  <div className="gh-muted">{active.role}</div>
                </div>
                <button type="button" role="menuitem" className="gh-button gh-secondary gh-small" onClick={() => (menu.setOpen(false), props.organizationProfileUrl ? go(props.organizationProfileUrl) : setDialog('manage'))}>
                  Manage
                </button>
              </div>
            ) : null}
            <div className="gh-menu-label">Switch to</div>
            {props.hidePersonal ? null : (
              <button type="button" role="menuitemradio" aria-checked={!active} className="gh-menu-item" onClick={() => choose(null)}>
                <Avatar imageUrl={state.user.imageUrl} name={personal} size={24} /> <span className="gh-ellipsis">Personal account</span>
              </button>
            )}
            {organizations.map((o) => (
              <button key={o.id} type="button" role="menuitemradio" aria-checked={o.id === active?.id} className="gh-menu-item" onClick={() => choose(o.id)}>
                <Avatar imageUrl={o.imageUrl} name={o.name} size={24} square />
                <span className="gh-ellipsis" style={{ flex: 1 }}>{o.name}</span>
                <span className="gh-muted">{o.role}</span>
              </button>
            ))}
            <PendingOrganizations {...pending} onJoined={(id) => choose(id)} />
            <button type="button" role="menuitem" className="gh-menu-item" onClick={() => (menu.setOpen(false), props.createOrganizationUrl ? go(props.createOrganizationUrl) : setDialog('create'))}>
              <Icon d="M12 5v14M5 12h14" /> Create organization
            </button>
          </div>
        ) : null}
        <FormError error={form.errors[FORM]} />
      </div>
      {dialog === 'create' ? <Dialog label="Create organization" onClose={() => setDialog(null)}><CreateOrganization onCreated={() => setDialog(null)} /></Dialog> : null}
      {dialog === 'manage' ? <Dialog label="Manage organization" onClose={() => setDialog(null)}><OrganizationProfile /></Dialog> : null}
    </Root>
  );
}

export interface CreateOrganizationProps {
  /** Where to go once created (and made active). */
  afterCreateUrl?: string;
  onCreated?: (organizationId: string) => void;
  appearance?: Appearance;
}

export function CreateOrganization(props: CreateOrganizationProps) {
  const { createOrganization } = useOrganizationList();
  const [values, setValues] = useState({ name: '', slug: '' });
  const form = useForm(['name', 'slug']);
  return (
    <Root appearance={props.appearance}>
      <div className="gh-card" data-gh-component="create-organization">
        <Header title="Create organization" subtitle="Invite your team and work together." />
        <form className="gh-form" noValidate onSubmit={form.submit(async () => {
          const created = await createOrganization({ name: values.name, ...(values.slug ? { slug: values.slug } : {}) });
          props.onCreated?.(created.id);
          go(props.afterCreateUrl);
        })}>
          <Field label="Name" name="name" required autoFocus value={values.name} onChange={(e) => setValues({ ...values, name: e.target.value })} error={form.errors.name} />
          <Field label="Slug (optional)" name="slug" placeholder="my-team" value={values.slug} onChange={(e) => setValues({ ...values, slug: e.target.value.toLowerCase() })} error={form.errors.slug} />
          <FormError error={form.errors[FORM]} />
          <Submit busy={form.busy}>Create organization</Submit>
        </form>
      </div>
    </Root>
  );
}

export interface OrganizationProfileProps {
  appearance?: Appearance;
  /**
   * The page invitation emails link to, with the `token` and an `__gh_invitation` mark (a page with
   * SignIn or SignUp accepts it). Default: Gatehouse's hosted accept page.
   */
  invitationUrl?: string;
  /** More tabs after General and Members (e.g. invitations), rendered the same way. */
  extraTabs?: TabDef[];
}

/** The active organization: its name and image (org:manage), its members and their roles. */
export function OrganizationProfile(props: OrganizationProfileProps) {
  const { organization, membership } = useOrganization();
  if (!organization || !membership) {
    return (
      <Root appearance={props.appearance}>
        <div className="gh-card" data-gh-component="organization-profile"><p className="gh-notice">Choose an organization first.</p></div>
      </Root>
    );
  }
  const canManage = membership.permissions.includes('org:manage');
  const canManageMembers = membership.permissions.includes('org:members:manage');
  return (
    <Root appearance={props.appearance}>
      <div className="gh-card gh-wide" data-gh-component="organization-profile">
        <Tabs
          title={organization.name}
          tabs={[
            { id: 'members', label: 'Members', render: () => <MembersTab canManage={canManageMembers} /> },
            ...(canManageMembers ? [{ id: 'invitations', label: 'Invitations', render: () => <InvitationsTab invitationUrl={props.invitationUrl} /> }] : []),
            ...(canManage ? [{ id: 'domains', label: 'Domains', render: () => <DomainsTab /> }] : []),
            ...(canManage ? [{ id: 'api-keys', label: 'API keys', render: () => <ApiKeysSection owner="organization" /> }] : []),
            { id: 'general', label: 'General', render: () => <GeneralTab canManage={canManage} /> },
            ...(props.extraTabs ?? []),
          ]}
        />
      </div>
    </Root>
  );
}

function GeneralTab({ canManage }: { canManage: boolean }) {
  const client = useGatehouse();
  const organization = useGatehouseState().organization!;
  const [name, setName] = useState(organization.name);
  const [saved, setSaved] = useState(false);
  const form = useForm(['name', 'slug']);
  return (
    <>
    <section className="gh-section">
      <h2 className="gh-section-title">Organization</h2>
      <div className="gh-row" style={{ marginBottom: 16 }}>
        <Avatar imageUrl={organization.imageUrl} name={organization.name} size={56} square />
        <div><div className="gh-name">{organization.name}</div><div className="gh-muted">{organization.slug}</div></div>
      </div>
      {canManage ? (
        <form className="gh-form" noValidate onSubmit={form.submit(async () => {
          setSaved(false);
          await client.organization.update({ name });
          setSaved(true);
        })}>
          <Field label="Name" name="name" value={name} onChange={(e) => setName(e.target.value)} error={form.errors.name} />
          <FormError error={form.errors[FORM]} />
          <div className="gh-row"><Submit busy={form.busy}>Save</Submit><p className="gh-success" role="status">{saved ? 'Saved.' : ''}</p></div>
        </form>
      ) : <p className="gh-muted">Only members allowed to manage the organization can change it.</p>}
    </section>
    {canManage ? <RequireMfa /> : null}
    </>
  );
}

const ROLES = ['owner', 'admin', 'member'];

/** The members list; adding a member by email is its own section so invitations can sit beside it. */
export function MembersTab({ canManage }: { canManage: boolean }) {
  const client = useGatehouse();
  const [members, setMembers] = useState<Member[] | null>(null);
  const list = useForm([]);
  const add = useForm(['email', 'role']);
  const [email, setEmail] = useState('');
  const reload = useCallback(async () => setMembers((await client.organization.members.list({ limit: 100 })).data), [client]);
  useEffect(() => void list.submit(reload)(), [reload]); // eslint-disable-line react-hooks/exhaustive-deps
  return (
    <>
      {canManage ? (
        <section className="gh-section" aria-labelledby="gh-add-member">
          <h2 className="gh-section-title" id="gh-add-member">Add a member</h2>
          <form className="gh-form" noValidate onSubmit={add.submit(async () => {
            await client.organization.members.add({ email, role: 'member' });
            setEmail('');
            await reload();
          })}>
            <Field label="Email address of an existing user" name="email" type="email" value={email} onChange={(e) => setEmail(e.target.value)} error={add.errors.email} />
            <FormError error={add.errors[FORM] ?? add.errors.role} />
            <div><Submit busy={add.busy}>Add member</Submit></div>
          </form>
        </section>
      ) : null}
      <section className="gh-section" aria-labelledby="gh-members">
        <h2 className="gh-section-title" id="gh-members">Members</h2>
        <FormError error={list.errors[FORM]} />
        <ul className="gh-list">
          {(members ?? []).map((m) => (
            <li key={m.userId}>
              <Avatar imageUrl={m.imageUrl} name={displayName(m)} size={32} />
              <div style={{ flex: 1, minWidth: 0 }}>
                <div className="gh-name gh-ellipsis">{displayName(m)}</div>
                <div className="gh-muted gh-ellipsis">{m.email}</div>
              </div>
              {canManage ? (
                <>
                  <label className="gh-visually-hidden" htmlFor={`gh-role-${m.userId}`}>Role of {m.email}</label>
                  <select id={`gh-role-${m.userId}`} className="gh-select" value={m.role} onChange={(e) => void list.submit(async () => {
                    await client.organization.members.updateRole(m.userId, e.target.value);
                    await reload();
                  })()}>
                    {[...new Set([...ROLES, m.role])].map((r) => <option key={r} value={r}>{r}</option>)}
                  </select>
                  <button type="button" className="gh-button gh-danger gh-small" aria-label={`Remove ${m.email}`} onClick={() => void list.submit(async () => {
                    await client.organization.members.remove(m.userId);
                    await reload();
                  })()}>Remove</button>
                </>
              ) : <span className="gh-badge">{m.role}</span>}
            </li>
          ))}
        </ul>
      </section>
    </>
  );
}
