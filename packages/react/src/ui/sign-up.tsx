import { useState } from 'react';
import { useGatehouse, type Appearance } from '../context.js';
import { useEnvironment } from './sign-in.js';
import { Field, FORM, FormError, go, Header, Root, Submit, useAppearance, useForm } from './primitives.js';

export interface SignUpProps {
  afterSignUpUrl?: string;
  /** Where "Sign in" leads. */
  signInUrl?: string;
  onSignUp?: () => void;
  appearance?: Appearance;
}

/** Creates an account with a password (the method sign-up uses); hidden reasons are said plainly. */
export function SignUp(props: SignUpProps) {
  const client = useGatehouse();
  const appearance = useAppearance(props.appearance);
  const { environment, error: loadError } = useEnvironment();
  const [values, setValues] = useState({ firstName: '', lastName: '', email: '', password: '' });
  const form = useForm(['firstName', 'lastName', 'email', 'password']);
  const set = (key: keyof typeof values) => (e: { target: { value: string } }) => setValues({ ...values, [key]: e.target.value });
  const name = appearance.applicationName;

  let body;
  if (!environment) {
    body = loadError ? <FormError error={loadError} /> : <div className="gh-row" style={{ justifyContent: 'center' }}><span className="gh-spinner" aria-label="Loading" /></div>;
  } else if (!environment.signUp || !environment.authMethods.password) {
    body = <p className="gh-notice" role="status">Sign-up is closed for this application. Ask its administrator for an invitation.</p>;
  } else {
    body = (
      <form
        className="gh-form"
        noValidate
        onSubmit={form.submit(async () => {
          await client.signUp({
            email: values.email,
            password: values.password,
            ...(values.firstName ? { firstName: values.firstName } : {}),
            ...(values.lastName ? { lastName: values.lastName } : {}),
          });
          props.onSignUp?.();
          go(props.afterSignUpUrl);
        })}
      >
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
        <Header title="Create your account" subtitle={name ? `to continue to ${name}` : 'Welcome! Fill in the details to get started.'} logoUrl={appearance.logoUrl} />
        {body}
        {props.signInUrl ? (
          <p className="gh-footer">Already have an account? <a className="gh-link" href={props.signInUrl}>Sign in</a></p>
        ) : null}
      </div>
    </Root>
  );
}
