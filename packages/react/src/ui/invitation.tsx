import { useEffect, useState } from 'react';
import { GatehouseError, INVITATION_MARK, type InvitationPreview } from '@gatehouse/js';
import { useGatehouse } from '../context.js';
import { Field, FORM, FormError, Submit, useForm } from './primitives.js';
import { settle, type SecondFactorAsk } from './second-factor.js';

/**
 * The invitation token in this page's URL: a `token` next to the `__gh_invitation` mark that
 * `organization.invitations.create()` adds (or any `token` when `unmarked`, on the hosted accept page).
 */
export function invitationToken(unmarked = false): string | null {
  if (typeof location === 'undefined') return null;
  const params = new URL(location.href).searchParams;
  return unmarked || params.has(INVITATION_MARK) ? params.get('token') : null;
}

/**
 * Accepts the invitation of an emailed link: the token proves the address, so it signs in the
 * account of that address or creates one (a password and names apply to a new account only; without a
 * password the newcomer signs in later with emailed codes or links), then joins the organization.
 */
export function InvitationAcceptance(props: { token: string; onDone: () => void; onSecondFactor: (next: SecondFactorAsk) => void }) {
  const client = useGatehouse();
  const form = useForm(['firstName', 'lastName', 'password']);
  const [values, setValues] = useState({ firstName: '', lastName: '', password: '' });
  // Whom the link is for and where it leads, before accepting (nothing changes until the button).
  const [preview, setPreview] = useState<InvitationPreview | null>(null);
  useEffect(() => {
    let live = true;
    client.invitations.preview(props.token).then(
      (found) => live && setPreview(found),
      // An unusable link keeps the plain notice: accepting answers with the server's reason.
      () => undefined,
    );
    return () => {
      live = false;
    };
  }, [client, props.token]);
  const set = (key: keyof typeof values) => (e: { target: { value: string } }) => setValues({ ...values, [key]: e.target.value });
  return (
    <form
      className="gh-form"
      noValidate
      data-gh-component="accept-invitation"
      onSubmit={form.submit(async () => {
        const fromUrl = invitationToken(true) === props.token;
        let result;
        try {
          result = await client.invitations.acceptFromLink({
            ...(fromUrl ? {} : { token: props.token }),
            ...(values.password ? { password: values.password } : {}),
            ...(values.firstName ? { firstName: values.firstName } : {}),
            ...(values.lastName ? { lastName: values.lastName } : {}),
          });
        } catch (error) {
          // An unknown token is the link's fault, not the password's: the form's error, not the field's.
          if (error instanceof GatehouseError && error.code === 'invalid_credentials') throw new Error(error.message);
          throw error;
        }
        settle(result, props.onDone, props.onSecondFactor);
      })}
    >
      {preview ? (
        <div className="gh-notice" role="status" data-gh-invitation-preview="">
          {preview.organization.imageUrl && <img src={preview.organization.imageUrl} alt="" width={32} height={32} style={{ borderRadius: 6, verticalAlign: 'middle', marginRight: 8 }} />}
          You were invited to join <strong>{preview.organization.name}</strong> as {preview.role}. Accepting signs you in as {preview.email}, the address the invitation was sent to.
        </div>
      ) : (
        <p className="gh-notice" role="status">You were invited to join an organization. Accepting signs you in with the address the invitation was sent to.</p>
      )}
      <p className="gh-muted" style={{ margin: 0 }}>New here? Choose your name and, if you like, a password. Already have an account? Just accept.</p>
        <div className="gh-form">
          <div className="gh-grid2">
            <Field label="First name" name="firstName" autoComplete="given-name" value={values.firstName} onChange={set('firstName')} error={form.errors.firstName} />
            <Field label="Last name" name="lastName" autoComplete="family-name" value={values.lastName} onChange={set('lastName')} error={form.errors.lastName} />
          </div>
          <Field label="Password (optional)" name="password" type="password" autoComplete="new-password" value={values.password} onChange={set('password')} error={form.errors.password} hint={<p className="gh-muted" style={{ margin: 0 }}>Only for a new account; without one you sign in with emailed codes or links.</p>} />
        </div>
      <FormError error={form.errors[FORM]} />
      <Submit busy={form.busy}>Accept invitation</Submit>
    </form>
  );
}
