import { useState } from 'react';
import { useGatehouse, type Appearance } from '../context.js';
import { InvitationAcceptance, invitationToken } from './invitation.js';
import { SsoButtons, thisPage, useEnvironment, useRedirectResult } from './sign-in.js';
import { Field, FORM, FormError, go, Header, Root, Submit, useAppearance, useForm } from './primitives.js';
import { SecondFactorStep, settle, type SecondFactorAsk } from './second-factor.js';

export interface SignUpProps {
  afterSignUpUrl?: string;
  /** Where "Sign in" leads. */
  signInUrl?: string;
  /** The page the identity provider sends the user back to after SSO (default: this page, whose SignIn or SignUp completes it). */
  ssoRedirectUrl?: string;
  onSignUp?: () => void;
  appearance?: Appearance;
}

/**
 * Creates an account with a password (the method sign-up uses). When the environment requires a
 * verified email, a second step takes the emailed code. Closed sign-up is said plainly; an
 * invitation link (`__gh_invitation`) is accepted here even then.
 */
export function SignUp(props: SignUpProps) {
  const client = useGatehouse();
  const appearance = useAppearance(props.appearance);
  const { environment, error: loadError } = useEnvironment();
  const [values, setValues] = useState({ firstName: '', lastName: '', email: '', password: '' });
  const [verifying, setVerifying] = useState<string | null>(null);
  /** The account exists but waits for a second factor (mfa "required"). */
  const [second, setSecond] = useState<SecondFactorAsk | null>(null);
  const [invitation] = useState(invitationToken);
  const form = useForm(['firstName', 'lastName', 'email', 'password']);
  const set = (key: keyof typeof values) => (e: { target: { value: string } }) => setValues({ ...values, [key]: e.target.value });
  const name = appearance.applicationName;
  const done = () => {
    props.onSignUp?.();
    go(props.afterSignUpUrl);
  };
  useRedirectResult(form.submit, done, setSecond);
  const start = async () => {
    const result = await client.signUp({
      email: values.email,
      password: values.password,
      ...(values.firstName ? { firstName: values.firstName } : {}),
      ...(values.lastName ? { lastName: values.lastName } : {}),
    });
    if (result.status === 'verification_required') setVerifying(values.email);
    else settle(result, done, setSecond);
  };

  let title = 'Create your account';
  let body;
  if (second) {
    title = 'Two-step verification';
    body = <SecondFactorStep ask={second} onDone={done} />;
  } else if (invitation) {
    title = 'Accept your invitation';
    body = <InvitationAcceptance token={invitation} onDone={done} onSecondFactor={setSecond} />;
  } else if (!environment) {
    body = loadError ? <FormError error={loadError} /> : <div className="gh-row" style={{ justifyContent: 'center' }}><span className="gh-spinner" aria-label="Loading" /></div>;
  } else if (!environment.signUp || !environment.authMethods.password) {
    body = <p className="gh-notice" role="status">Sign-up is closed for this application. Ask its administrator for an invitation.</p>;
  } else if (verifying) {
    title = 'Verify your email';
    body = (
      <div className="gh-form">
        <p className="gh-notice" role="status">We emailed a 6-digit code to <strong>{verifying}</strong>. Enter it to finish creating your account.</p>
        <SignUpCodeForm onDone={done} onSecondFactor={setSecond} />
        <div className="gh-links">
          <button type="button" className="gh-link" onClick={() => void form.submit(start)()} disabled={form.busy}>Send a new code</button>
          <button type="button" className="gh-link" onClick={() => setVerifying(null)}>Change the email address</button>
        </div>
        <FormError error={form.errors[FORM] ?? form.errors.email ?? form.errors.password} />
      </div>
    );
  } else {
    body = (
      <form className="gh-form" noValidate onSubmit={form.submit(start)}>
        <SsoButtons
          connections={environment.authMethods.sso ? environment.ssoConnections : []}
          busy={form.busy}
          divider
          onChoose={(connectionId) => void form.submit(() => client.signIn.sso.start({ connectionId, redirectUrl: props.ssoRedirectUrl ?? thisPage() }))()}
        />
        <div className="gh-grid2">
          <Field label="First name" name="firstName" autoComplete="given-name" value={values.firstName} onChange={set('firstName')} error={form.errors.firstName} />
          <Field label="Last name" name="lastName" autoComplete="family-name" value={values.lastName} onChange={set('lastName')} error={form.errors.lastName} />
        </div>
        <Field label="Email address" name="email" type="email" autoComplete="email" required value={values.email} onChange={set('email')} error={form.errors.email} />
        <Field label="Password" name="password" type="password" autoComplete="new-password" required value={values.password} onChange={set('password')} error={form.errors.password} />
        <FormError error={form.errors[FORM]} />
        <Submit busy={form.busy}>Create account</Submit>
      </form>
    );
  }
  return (
    <Root appearance={props.appearance}>
      <div className="gh-card" data-gh-component="sign-up">
        <Header title={title} subtitle={name ? `to continue to ${name}` : 'Welcome! Fill in the details to get started.'} logoUrl={appearance.logoUrl} />
        {body}
        {props.signInUrl && !invitation ? (
          <p className="gh-footer">Already have an account? <a className="gh-link" href={props.signInUrl}>Sign in</a></p>
        ) : null}
      </div>
    </Root>
  );
}

function SignUpCodeForm(props: { onDone: () => void; onSecondFactor: (next: SecondFactorAsk) => void }) {
  const client = useGatehouse();
  const form = useForm(['code']);
  const [code, setCode] = useState('');
  return (
    <form className="gh-form" noValidate onSubmit={form.submit(async () => {
      settle(await client.signUp.verify({ code }), props.onDone, props.onSecondFactor);
    })}>
      <Field label="Verification code" name="code" inputMode="numeric" autoComplete="one-time-code" autoFocus maxLength={6} value={code} onChange={(e) => setCode(e.target.value.replace(/\D/g, ''))} error={form.errors.code ?? form.errors[FORM]} />
      <Submit busy={form.busy}>Verify and create account</Submit>
    </form>
  );
}
