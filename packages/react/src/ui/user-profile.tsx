import { useRef, useState } from 'react';
import { useGatehouse, useGatehouseState, type Appearance } from '../context.js';
import { Avatar, displayName, Field, FORM, FormError, Root, Submit, useForm } from './primitives.js';
import { useEnvironment } from './sign-in.js';
import { ApiKeysSection } from './api-keys.js';
import { ConnectedAccounts } from './social.js';
import { Tabs } from './tabs.js';
import { SecurityTab } from './user-security.js';

export interface UserProfileProps {
  appearance?: Appearance;
  /** The page a provider returns to after "Connect" (default: this page); it must pass the origin lock. */
  linkRedirectUrl?: string;
}

/** The signed-in user's account: profile and avatar; password, two-step verification and devices; API keys. */
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
            { id: 'api-keys', label: 'API keys', render: () => <ApiKeysSection owner="user" /> },
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
