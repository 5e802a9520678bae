import { useEffect, useRef, useState } from 'react';
import { GatehouseError, type EnvironmentInfo } from '@gatehouse/js';
import { useGatehouse, type Appearance } from '../context.js';
import { InvitationAcceptance, invitationToken } from './invitation.js';
import { PasskeyButton, usePasskeyAutofill } from './passkey-button.js';
import { Field, FORM, FormError, go, Header, Root, Submit, useAppearance, useForm } from './primitives.js';
import { SecondFactorStep, settle, type SecondFactorAsk } from './second-factor.js';
import { SsoButtons, type Connection } from './social.js';

export { SsoButtons, type Connection };

/** GET /v1/environment, once per client. */
export function useEnvironment(): { environment: EnvironmentInfo | null; error: string | null } {
  const client = useGatehouse();
  const [environment, setEnvironment] = useState<EnvironmentInfo | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    let live = true;
    client.environment().then(
      (env) => live && setEnvironment(env),
      (e: Error) => live && setError(e.message),
    );
    return () => {
      live = false;
    };
  }, [client]);
  return { environment, error };
}

export interface SignInProps {
  /** Where to go once signed in (default: stay, the SignedIn parts of the page take over). */
  afterSignInUrl?: string;
  /** Where "Sign up" leads; hidden when absent or when the environment has sign-up closed. */
  signUpUrl?: string;
  /** The page an emailed sign-in link opens (default: this page); it must pass the origin lock. */
  magicLinkRedirectUrl?: string;
  /** The page the identity provider sends the user back to after SSO (default: this page). */
  ssoRedirectUrl?: string;
  onSignIn?: () => void;
  appearance?: Appearance;
}

type Step = { kind: 'start' } | { kind: 'code'; email: string } | { kind: 'link'; email: string } | { kind: 'second'; ask: SecondFactorAsk };
/**
 * Arriving from an emailed link or back from an identity provider: exchanges the URL's token once
 * (an invitation's is left to the acceptance form), or shows the refusal it carries. `ask` shows
 * the second factor when the exchange stopped short of a session.
 */
export function useRedirectResult(submit: ReturnType<typeof useForm>['submit'], done: () => void, ask: (next: SecondFactorAsk) => void): void {
  const client = useGatehouse();
  const handled = useRef(false);
  useEffect(() => {
    if (handled.current || typeof location === 'undefined') return;
    handled.current = true;
    const url = new URL(location.href);
    // An invitation's token is the acceptance form's; a link's return is UserProfile's.
    if (invitationToken() || url.searchParams.has('__gh_link')) return;
    if (url.searchParams.has('token') || url.searchParams.has('error')) void submit(async () => settle(await client.handleRedirect(), done, ask))();
  }, []); // eslint-disable-line react-hooks/exhaustive-deps
}


export function thisPage(): string {
  return typeof location === 'undefined' ? '' : location.href.split('#')[0]!;
}

/** The SSO connection whose domains include the email's. */
function connectionFor(connections: Connection[], email: string): Connection | undefined {
  const domain = email.trim().toLowerCase().split('@')[1];
  return domain ? connections.find((c) => c.domains.some((d) => d.toLowerCase() === domain)) : undefined;
}

/**
 * Shows exactly the methods the environment enables: password, emailed code or link, one button
 * per SSO connection, and SSO by the email's domain. Ends a magic link's or SSO's round trip, and
 * accepts an invitation when the URL carries one.
 */
export function SignIn(props: SignInProps) {
  const client = useGatehouse();
  const appearance = useAppearance(props.appearance);
  const { environment, error: loadError } = useEnvironment();
  const [step, setStep] = useState<Step>({ kind: 'start' });
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [invitation] = useState(() => invitationToken());
  /** The email's domain has an SSO connection, but the server said it is not (or no longer) set up. */
  const [ssoRefused, setSsoRefused] = useState<string | null>(null);
  const form = useForm(['email', 'password', 'code']);
  const done = () => {
    props.onSignIn?.();
    go(props.afterSignInUrl);
  };

  const ask = (next: SecondFactorAsk) => setStep({ kind: 'second', ask: next });
  useRedirectResult(form.submit, done, ask);

  const methods = environment?.authMethods;
  usePasskeyAutofill(Boolean(methods?.passkey) && step.kind === 'start' && !invitation, done);
  const name = appearance.applicationName;
  const subtitle = name ? `to continue to ${name}` : 'Welcome back! Sign in to continue.';

  const connections = methods?.sso ? (environment?.ssoConnections ?? []) : [];
  const routed = connectionFor(connections, email);
  const sso = routed && ssoRefused !== email ? routed : undefined;
  const startSso = (params: { email: string } | { connectionId: string }) =>
    form.submit(async () => {
      try {
        await client.signIn.sso.start({ ...params, redirectUrl: props.ssoRedirectUrl ?? thisPage() });
      } catch (error) {
        // No connection for the domain after all: the other methods take over.
        if ('email' in params && error instanceof GatehouseError && error.code === 'sso_not_configured' && (methods?.password || methods?.emailCode || methods?.magicLink)) {
          setSsoRefused(params.email);
          return;
        }
        throw error;
      }
    });

  let body;
  if (invitation) {
    body = step.kind === 'second' ? <SecondFactorStep ask={step.ask} onDone={done} /> : <InvitationAcceptance token={invitation} onDone={done} onSecondFactor={ask} />;
  } else if (!environment) {
    body = loadError ? <FormError error={loadError} /> : <div className="gh-row" style={{ justifyContent: 'center' }}><span className="gh-spinner" aria-label="Loading" /></div>;
  } else if (step.kind === 'second') {
    body = <SecondFactorStep ask={step.ask} onDone={done} onRestart={() => setStep({ kind: 'start' })} />;
  } else if (step.kind === 'code') {
    body = (
      <div className="gh-form">
        <p className="gh-notice" role="status">We emailed a 6-digit code to <strong>{step.email}</strong>.</p>
        <CodeForm email={step.email} onDone={done} onSecondFactor={ask} />
        <button type="button" className="gh-link" onClick={() => setStep({ kind: 'start' })}>Use another method</button>
      </div>
    );
  } else if (step.kind === 'link') {
    body = (
      <div className="gh-form">
        <p className="gh-notice" role="status">Check your inbox: we emailed a sign-in link to <strong>{step.email}</strong>. Open it on this device.</p>
        <button type="button" className="gh-button gh-secondary" onClick={() => setStep({ kind: 'start' })}>Back</button>
      </div>
    );
  } else {
    const passwordless = (methods?.emailCode ? 1 : 0) + (methods?.magicLink ? 1 : 0);
    const onlySso = !methods?.password && passwordless === 0 && Boolean(methods?.sso);
    const onlyPasskey = !methods?.password && passwordless === 0 && !methods?.sso && Boolean(methods?.passkey);
    const none = !methods?.password && passwordless === 0 && !methods?.sso && !methods?.passkey;
    const usePassword = methods?.password && !sso;
    const startCode = form.submit(async () => {
      await client.signIn.emailCode.start({ email });
      setStep({ kind: 'code', email });
    });
    const startLink = form.submit(async () => {
      const redirectUrl = props.magicLinkRedirectUrl ?? thisPage();
      await client.signIn.magicLink.start({ email, redirectUrl });
      setStep({ kind: 'link', email });
    });
    body = none ? (
      <FormError error="This application has no sign-in method turned on. Its administrator can enable one in the console." />
    ) : onlyPasskey ? (
      // Passkeys are the only way in: the button alone (no email field leads anywhere).
      <div className="gh-form">
        <PasskeyButton onDone={done} divider={false} unsupported="This application signs in with passkeys, and this browser cannot use them. Use a browser that supports passkeys." />
      </div>
    ) : (
      <form
        className="gh-form"
        noValidate
        onSubmit={
          sso || onlySso
            ? startSso({ email })
            : usePassword
              ? form.submit(async () => {
                  settle(await client.signIn.password({ email, password }), done, ask);
                })
              : methods?.emailCode
                ? startCode
                : startLink
        }
      >
        <SsoButtons connections={connections} busy={form.busy} onChoose={(connectionId) => void startSso({ connectionId })()} divider={!onlySso} />
        {methods?.passkey ? <PasskeyButton onDone={done} divider disabled={form.busy} /> : null}
        <Field label="Email address" name="email" type="email" autoComplete={methods?.passkey ? 'username webauthn' : 'email'} required autoFocus value={email} onChange={(e) => setEmail(e.target.value)} error={form.errors.email} />
        {sso ? <p className="gh-notice" role="status">{`${email.split('@')[1]} signs in with ${sso.name}.`}</p> : null}
        {usePassword ? <Field label="Password" name="password" type="password" autoComplete="current-password" required value={password} onChange={(e) => setPassword(e.target.value)} error={form.errors.password} /> : null}
        <FormError error={form.errors[FORM]} />
        <Submit busy={form.busy}>{sso ? `Continue with ${sso.name}` : onlySso ? 'Continue with single sign-on' : usePassword ? 'Continue' : methods?.emailCode ? 'Email me a code' : 'Email me a sign-in link'}</Submit>
        {!sso && methods?.password && passwordless > 0 ? <div className="gh-divider">or</div> : null}
        <div className="gh-alternatives" hidden={Boolean(sso)}>
          {methods?.emailCode && methods.password ? (
            <button type="button" className="gh-button gh-secondary" onClick={() => void startCode()} disabled={form.busy}>Email me a code</button>
          ) : null}
          {methods?.magicLink && (methods.password || methods.emailCode) ? (
            <button type="button" className="gh-button gh-secondary" onClick={() => void startLink()} disabled={form.busy}>Email me a sign-in link</button>
          ) : null}
        </div>
      </form>
    );
  }

  return (
    <Root appearance={props.appearance}>
      <div className="gh-card" data-gh-component="sign-in">
        <Header title={step.kind === 'second' ? 'Two-step verification' : invitation ? 'Accept your invitation' : 'Sign in'} subtitle={subtitle} logoUrl={appearance.logoUrl} />
        {body}
        {environment?.signUp && props.signUpUrl && !invitation && step.kind !== 'second' ? (
          <p className="gh-footer">No account? <a className="gh-link" href={props.signUpUrl}>Sign up</a></p>
        ) : null}
      </div>
    </Root>
  );
}

function CodeForm(props: { email: string; onDone: () => void; onSecondFactor: (next: SecondFactorAsk) => void }) {
  const client = useGatehouse();
  const form = useForm(['code']);
  const [code, setCode] = useState('');
  return (
    <form className="gh-form" noValidate onSubmit={(e) => (e.preventDefault(), void verify())}>
      <Field label="Verification code" name="code" inputMode="numeric" autoComplete="one-time-code" autoFocus maxLength={6} value={code} onChange={(e) => setCode(e.target.value.replace(/\D/g, ''))} error={form.errors.code ?? form.errors[FORM]} />
      <Submit busy={form.busy}>Verify</Submit>
    </form>
  );
  function verify() {
    return form.submit(async () => {
      settle(await client.signIn.emailCode.verify({ email: props.email, code }), props.onDone, props.onSecondFactor);
    })();
  }
}
