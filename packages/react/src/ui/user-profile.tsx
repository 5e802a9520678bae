import { useEffect, useRef, useState } from 'react';
import type { SessionView } from '@gatehouse/js';
import { useGatehouse, useGatehouseState, type Appearance } from '../context.js';
import { Avatar, displayName, Field, FORM, FormError, Root, Submit, useForm } from './primitives.js';
import { useEnvironment } from './sign-in.js';
import { ConnectedAccounts } from './social.js';
import { PasskeysSection } from './passkeys.js';
import { Tabs } from './tabs.js';

export interface UserProfileProps {
  appearance?: Appearance;
  /** The page a provider returns to after "Connect" (default: this page); it must pass the origin lock. */
  linkRedirectUrl?: string;
}

/** The signed-in user's account: profile and avatar, password, active sessions. */
export function UserProfile(props: UserProfileProps) {
  const state = useGatehouseState();
  if (!state.isSignedIn || !state.user) return null;
  return (
    <Root appearance={props.appearance}>
      <div className="gh-card gh-wide" data-gh-component="user-profile">
        <Tabs
          title="Account"
          tabs={[
            { id: 'profile', label: 'Profile', render: () => <ProfileTab linkRedirectUrl={props.linkRedirectUrl} /> },
            { id: 'security', label: 'Security', render: () => <SecurityTab /> },
          ]}
        />
      </div>
    </Root>
  );
}

function ProfileTab(props: { linkRedirectUrl?: string | undefined }) {
  const client = useGatehouse();
  const { environment } = useEnvironment();
  const user = useGatehouseState().user!;
  const [values, setValues] = useState({ firstName: user.firstName ?? '', lastName: user.lastName ?? '' });
  const [saved, setSaved] = useState(false);
  const form = useForm(['firstName', 'lastName']);
  const avatar = useForm(['imageUrl']);
  const file = useRef<HTMLInputElement>(null);
  return (
    <>
      <section className="gh-section" aria-labelledby="gh-avatar-title">
        <h2 className="gh-section-title" id="gh-avatar-title">Profile picture</h2>
        <div className="gh-row">
          <Avatar imageUrl={user.imageUrl} name={displayName(user)} size={56} />
          <input ref={file} type="file" accept="image/png,image/jpeg,image/webp,image/gif" className="gh-visually-hidden" aria-label="Upload a profile picture" tabIndex={-1}
            onChange={(e) => {
              const chosen = e.target.files?.[0];
              e.target.value = '';
              if (chosen) void avatar.submit(() => client.user.setAvatar(chosen))();
            }}
          />
          <button type="button" className="gh-button gh-secondary gh-small" disabled={avatar.busy} onClick={() => file.current?.click()}>
            {avatar.busy ? 'Uploading…' : 'Upload image'}
          </button>
          {user.imageUrl ? (
            <button type="button" className="gh-button gh-danger gh-small" disabled={avatar.busy} onClick={() => void avatar.submit(() => client.user.update({ imageUrl: null }))()}>
              Remove
            </button>
          ) : null}
        </div>
        <FormError error={avatar.errors[FORM] ?? avatar.errors.imageUrl} />
      </section>
      <section className="gh-section" aria-labelledby="gh-profile-title">
        <h2 className="gh-section-title" id="gh-profile-title">Profile</h2>
        <form className="gh-form" noValidate onSubmit={form.submit(async () => {
          setSaved(false);
          await client.user.update({ firstName: values.firstName || null, lastName: values.lastName || null });
          setSaved(true);
        })}>
          <div className="gh-grid2">
            <Field label="First name" name="firstName" autoComplete="given-name" value={values.firstName} onChange={(e) => setValues({ ...values, firstName: e.target.value })} error={form.errors.firstName} />
            <Field label="Last name" name="lastName" autoComplete="family-name" value={values.lastName} onChange={(e) => setValues({ ...values, lastName: e.target.value })} error={form.errors.lastName} />
          </div>
          <Field label="Email address" name="email" value={user.email} readOnly disabled />
          <FormError error={form.errors[FORM]} />
          <div className="gh-row">
            <Submit busy={form.busy}>Save</Submit>
            <p className="gh-success" role="status">{saved ? 'Saved.' : ''}</p>
          </div>
        </form>
      </section>
      {environment?.authMethods.sso ? <ConnectedAccounts connections={environment.ssoConnections} redirectUrl={props.linkRedirectUrl} /> : null}
    </>
  );
}

function SecurityTab() {
  const client = useGatehouse();
  const user = useGatehouseState().user!;
  const form = useForm(['currentPassword', 'newPassword']);
  const [values, setValues] = useState({ currentPassword: '', newPassword: '' });
  const [changed, setChanged] = useState(false);
  const [sessions, setSessions] = useState<SessionView[] | null>(null);
  const list = useForm([]);
  useEffect(() => {
    void list.submit(async () => setSessions(await client.sessions.list()))();
  }, [client]); // eslint-disable-line react-hooks/exhaustive-deps
  return (
    <>
      {user.passwordEnabled ? (
        <section className="gh-section" aria-labelledby="gh-password-title">
          <h2 className="gh-section-title" id="gh-password-title">Password</h2>
          <form className="gh-form" noValidate onSubmit={form.submit(async () => {
            setChanged(false);
            await client.user.changePassword(values);
            setValues({ currentPassword: '', newPassword: '' });
            setChanged(true);
            setSessions(await client.sessions.list());
          })}>
            <Field label="Current password" name="currentPassword" type="password" autoComplete="current-password" value={values.currentPassword} onChange={(e) => setValues({ ...values, currentPassword: e.target.value })} error={form.errors.currentPassword} />
            <Field label="New password" name="newPassword" type="password" autoComplete="new-password" value={values.newPassword} onChange={(e) => setValues({ ...values, newPassword: e.target.value })} error={form.errors.newPassword} />
            <FormError error={form.errors[FORM]} />
            <div className="gh-row">
              <Submit busy={form.busy}>Change password</Submit>
              <p className="gh-success" role="status">{changed ? 'Password changed. Your other devices were signed out.' : ''}</p>
            </div>
          </form>
        </section>
      ) : null}
      <PasskeysSection />
      <section className="gh-section" aria-labelledby="gh-sessions-title">
        <h2 className="gh-section-title" id="gh-sessions-title">Active devices</h2>
        <FormError error={list.errors[FORM]} />
        <ul className="gh-list">
          {(sessions ?? []).map((s) => (
            <li key={s.id}>
              <div style={{ flex: 1, minWidth: 0 }}>
                <div className="gh-name gh-ellipsis">{describeAgent(s.userAgent)} {s.current ? <span className="gh-badge">This device</span> : null}</div>
                <div className="gh-muted">Last active {new Date(s.lastActiveAt).toLocaleString()}</div>
              </div>
              {s.current ? null : (
                <button type="button" className="gh-button gh-danger gh-small" onClick={() => void list.submit(async () => {
                  await client.sessions.revoke(s.id);
                  setSessions(await client.sessions.list());
                })()}>Sign out</button>
              )}
            </li>
          ))}
        </ul>
      </section>
    </>
  );
}

function describeAgent(agent: string | null): string {
  if (!agent) return 'Unknown device';
  const browser = /Edg\//.test(agent) ? 'Edge' : /Chrom(e|ium)\//.test(agent) ? 'Chrome' : /Firefox\//.test(agent) ? 'Firefox' : /Safari\//.test(agent) ? 'Safari' : 'Browser';
  const os = /Windows/.test(agent) ? 'Windows' : /Mac OS X/.test(agent) ? 'macOS' : /Android/.test(agent) ? 'Android' : /iPhone|iPad/.test(agent) ? 'iOS' : /Linux/.test(agent) ? 'Linux' : '';
  return os ? `${browser} on ${os}` : browser;
}
