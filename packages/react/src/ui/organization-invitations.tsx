import { useCallback, useEffect, useState } from 'react';
import type { Invitation, MembershipRequest, OrganizationSuggestion, UserInvitation } from '@gatehouse/js';
import { useGatehouse } from '../context.js';
import { Avatar, Field, FORM, FormError, Submit, useForm } from './primitives.js';

const ROLES = ['member', 'admin', 'owner'];

function formatDate(ms: number): string {
  return new Date(ms).toLocaleDateString(undefined, { year: 'numeric', month: 'short', day: 'numeric' });
}

/**
 * OrganizationProfile's Invitations tab (org:members:manage): invite by email with a role, the
 * pending invitations with revoke, and the membership requests a verified domain's suggestions file.
 */
export function InvitationsTab(props: { invitationUrl?: string | undefined }) {
  const client = useGatehouse();
  const [invitations, setInvitations] = useState<Invitation[] | null>(null);
  const [requests, setRequests] = useState<MembershipRequest[]>([]);
  const [values, setValues] = useState({ email: '', role: 'member' });
  const [sent, setSent] = useState<string | null>(null);
  const invite = useForm(['email', 'role']);
  const list = useForm([]);
  const reload = useCallback(async () => {
    const [pending, asked] = await Promise.all([
      client.organization.invitations.list({ status: 'pending' }),
      client.organization.membershipRequests.list(),
    ]);
    setInvitations(pending);
    setRequests(asked.filter((r) => r.status === 'pending'));
  }, [client]);
  useEffect(() => void list.submit(reload)(), [reload]); // eslint-disable-line react-hooks/exhaustive-deps
  return (
    <>
      <section className="gh-section" aria-labelledby="gh-invite">
        <h2 className="gh-section-title" id="gh-invite">Invite by email</h2>
        <form className="gh-form" noValidate onSubmit={invite.submit(async () => {
          setSent(null);
          await client.organization.invitations.create({ email: values.email, role: values.role, ...(props.invitationUrl ? { redirectUrl: props.invitationUrl } : {}) });
          setSent(values.email);
          setValues({ ...values, email: '' });
          await reload();
        })}>
          <div className="gh-row" style={{ alignItems: 'flex-start' }}>
            <div style={{ flex: 1 }}>
              <Field label="Email address to invite" name="email" type="email" value={values.email} onChange={(e) => setValues({ ...values, email: e.target.value })} error={invite.errors.email} />
            </div>
            <div className="gh-field">
              <label className="gh-label" htmlFor="gh-invite-role">Role</label>
              <select id="gh-invite-role" className="gh-select" style={{ padding: '9px 8px' }} value={values.role} onChange={(e) => setValues({ ...values, role: e.target.value })}>
                {ROLES.map((r) => <option key={r} value={r}>{r}</option>)}
              </select>
            </div>
          </div>
          <FormError error={invite.errors[FORM] ?? invite.errors.role} />
          <div className="gh-row"><Submit busy={invite.busy}>Send invitation</Submit><p className="gh-success" role="status">{sent ? `Invitation sent to ${sent}.` : ''}</p></div>
        </form>
      </section>
      <section className="gh-section" aria-labelledby="gh-pending">
        <h2 className="gh-section-title" id="gh-pending">Pending invitations</h2>
        <FormError error={list.errors[FORM]} />
        {invitations && invitations.length === 0 ? <p className="gh-muted">No pending invitations.</p> : null}
        <ul className="gh-list" aria-labelledby="gh-pending">
          {(invitations ?? []).map((i) => (
            <li key={i.id}>
              <div style={{ flex: 1, minWidth: 0 }}>
                <div className="gh-name gh-ellipsis">{i.email}</div>
                <div className="gh-muted">Expires {formatDate(i.expiresAt)}</div>
              </div>
              <span className="gh-badge">{i.role}</span>
              <button type="button" className="gh-button gh-danger gh-small" aria-label={`Revoke the invitation to ${i.email}`} onClick={() => void list.submit(async () => {
                await client.organization.invitations.revoke(i.id);
                await reload();
              })()}>Revoke</button>
            </li>
          ))}
        </ul>
      </section>
      {requests.length > 0 ? (
        <section className="gh-section" aria-labelledby="gh-requests">
          <h2 className="gh-section-title" id="gh-requests">Requests to join</h2>
          <ul className="gh-list">
            {requests.map((r) => (
              <li key={r.id}>
                <div style={{ flex: 1, minWidth: 0 }}><div className="gh-name gh-ellipsis">{r.email}</div><div className="gh-muted">Asked {formatDate(r.createdAt)}</div></div>
                <button type="button" className="gh-button gh-small" aria-label={`Accept the request of ${r.email}`} onClick={() => void list.submit(async () => (await client.organization.membershipRequests.accept(r.id), await reload()))()}>Accept</button>
                <button type="button" className="gh-button gh-danger gh-small" aria-label={`Reject the request of ${r.email}`} onClick={() => void list.submit(async () => (await client.organization.membershipRequests.reject(r.id), await reload()))()}>Reject</button>
              </li>
            ))}
          </ul>
        </section>
      ) : null}
    </>
  );
}

/**
 * What OrganizationSwitcher offers besides the user's organizations: invitations to their verified
 * address and organizations a verified domain suggests. Loaded when the menu opens.
 */
export function usePendingOrganizations(open: boolean) {
  const client = useGatehouse();
  const [invitations, setInvitations] = useState<UserInvitation[]>([]);
  const [suggestions, setSuggestions] = useState<OrganizationSuggestion[]>([]);
  const reload = useCallback(async () => {
    // Either list may be refused (an unverified address): the menu then shows no such entries.
    const [i, s] = await Promise.all([client.invitations.list().catch(() => []), client.suggestions.list().catch(() => [])]);
    setInvitations(i.filter((x) => x.status === 'pending'));
    setSuggestions(s);
  }, [client]);
  useEffect(() => {
    if (open) void reload();
  }, [open, reload]);
  return { invitations, suggestions, reload };
}

/** The switcher menu's "Invitations" and "Suggested" entries, each with its action. */
export function PendingOrganizations(props: { invitations: UserInvitation[]; suggestions: OrganizationSuggestion[]; reload: () => Promise<void>; onJoined: (organizationId: string) => void }) {
  const client = useGatehouse();
  const form = useForm([]);
  if (props.invitations.length === 0 && props.suggestions.length === 0) return null;
  return (
    <div role="group" aria-label="Invitations and suggestions">
      {props.invitations.length > 0 ? <div className="gh-menu-label">Invitations</div> : null}
      {props.invitations.map((i) => (
        <div key={i.id} className="gh-menu-row">
          <Avatar imageUrl={i.organization.imageUrl} name={i.organization.name} size={24} square />
          <span className="gh-ellipsis" style={{ flex: 1 }}>{i.organization.name}</span>
          <button type="button" role="menuitem" className="gh-button gh-small" aria-label={`Join ${i.organization.name}`} disabled={form.busy} onClick={() => void form.submit(async () => {
            await client.invitations.accept(i.id);
            await props.reload();
            props.onJoined(i.organizationId);
          })()}>Join</button>
        </div>
      ))}
      {props.suggestions.length > 0 ? <div className="gh-menu-label">Suggested</div> : null}
      {props.suggestions.map((s) => (
        <div key={s.id} className="gh-menu-row">
          <Avatar imageUrl={s.organization.imageUrl} name={s.organization.name} size={24} square />
          <span className="gh-ellipsis" style={{ flex: 1 }}>{s.organization.name}</span>
          {s.status === 'pending' ? <span className="gh-badge">Requested</span> : (
            <button type="button" role="menuitem" className="gh-button gh-secondary gh-small" aria-label={`Ask to join ${s.organization.name}`} disabled={form.busy} onClick={() => void form.submit(async () => {
              await client.suggestions.accept(s.id);
              await props.reload();
            })()}>Ask to join</button>
          )}
        </div>
      ))}
      <FormError error={form.errors[FORM]} />
    </div>
  );
}
