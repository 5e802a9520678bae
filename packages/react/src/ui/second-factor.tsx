import { useEffect, useState } from 'react';
import { PasskeyError, passkeysSupported, type GatehouseState, type SecondFactorName, type SignInState, type TotpSetup } from '@gatehouse/js';
import { useGatehouse } from '../context.js';
import { errorsFrom, Field, FORM, FormError, Submit, useForm } from './primitives.js';
import { QrCode } from './qr.js';

/** What a way in answered when it stopped short of a session. */
export interface SecondFactorAsk {
  status: 'needs_second_factor' | 'needs_second_factor_setup';
  factors: SecondFactorName[];
}

/** A sign-in call's result: `done` when signed in, else `ask` with the second factor to show. */
export function settle(result: GatehouseState | SignInState, done: () => void, ask: (next: SecondFactorAsk) => void): void {
  const status = 'status' in result ? result.status : 'complete';
  if (status === 'needs_second_factor' || status === 'needs_second_factor_setup')
    ask({ status, factors: 'factors' in result ? result.factors : [] });
  else done();
}

/**
 * The second step of a sign-in: an authenticator code (or, with the switch, a backup code), or
 * "Use a passkey" for a user who has one; under mfa "required" for a user without one, the setup of
 * an authenticator (a QR code drawn here and the secret as text, then the backup codes, shown once,
 * before the session takes over the page) or of a passkey ("Set up a passkey").
 */
export function SecondFactorStep(props: { ask: SecondFactorAsk; onDone: () => void; onRestart?: () => void }) {
  return props.ask.status === 'needs_second_factor_setup' ? (
    <TotpSetupStep onDone={props.onDone} />
  ) : (
    <CodeStep factors={props.ask.factors} onDone={props.onDone} onRestart={props.onRestart} />
  );
}

/**
 * A passkey ceremony started from a button: busy while the browser's dialog is open; closing the
 * dialog is a choice, not an error. The button shows only where the browser has WebAuthn (decided
 * after mount, as a server render has none).
 */
function usePasskeyAction(run: () => Promise<unknown>) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | undefined>();
  const [supported, setSupported] = useState(false);
  useEffect(() => setSupported(passkeysSupported()), []);
  const start = async () => {
    setBusy(true);
    setError(undefined);
    try {
      await run();
    } catch (e) {
      setError(e instanceof PasskeyError && e.reason === 'cancelled' ? undefined : errorsFrom(e, [])[FORM]);
    } finally {
      setBusy(false);
    }
  };
  return { busy, error, supported, start };
}

function PasskeyAction(props: { label: string; step: string; action: ReturnType<typeof usePasskeyAction>; primary?: boolean }) {
  const { action } = props;
  if (!action.supported) return null;
  return (
    <div className="gh-alternatives" role="group" aria-label="Passkey">
      <button
        type="button"
        className={props.primary ? 'gh-button' : 'gh-button gh-secondary'}
        data-gh-passkey={props.step}
        onClick={() => void action.start()}
        disabled={action.busy}
        aria-busy={action.busy}
      >
        {action.busy ? <span className="gh-spinner" aria-hidden="true" /> : null}
        <span>{props.label}</span>
      </button>
      {action.error ? (
        <p className="gh-form-error" role="alert">
          {action.error}
        </p>
      ) : null}
    </div>
  );
}

function CodeStep(props: { factors: SecondFactorName[]; onDone: () => void; onRestart?: (() => void) | undefined }) {
  const client = useGatehouse();
  const form = useForm(['code']);
  const passkey = usePasskeyAction(async () => {
    await client.signIn.secondFactor({ factor: 'passkey' });
    props.onDone();
  });
  const hasPasskey = props.factors.includes('passkey');
  const hasCode = props.factors.includes('totp') || props.factors.includes('backup_code');
  const [factor, setFactor] = useState<'totp' | 'backup_code'>(props.factors.includes('totp') ? 'totp' : 'backup_code');
  const [code, setCode] = useState('');
  const other = factor === 'totp' ? props.factors.includes('backup_code') : props.factors.includes('totp');
  const switchTo = () => {
    setFactor(factor === 'totp' ? 'backup_code' : 'totp');
    setCode('');
    form.setErrors({});
  };
  const restart = props.onRestart ? (
    <button type="button" className="gh-link" onClick={props.onRestart}>
      Start over
    </button>
  ) : null;
  if (!hasCode) {
    // A passkey is the user's only second factor.
    return (
      <div className="gh-form" data-gh-step="second-factor">
        <p className="gh-notice" role="status">
          {passkey.supported ? 'Confirm it is you with your passkey.' : 'Your second factor is a passkey, and this browser cannot use passkeys. Sign in from a browser that can.'}
        </p>
        <PasskeyAction label="Use a passkey" step="second-factor" action={passkey} primary />
        <div className="gh-links">{restart}</div>
      </div>
    );
  }
  return (
    <form
      className="gh-form"
      noValidate
      data-gh-step="second-factor"
      onSubmit={form.submit(async () => {
        await client.signIn.secondFactor({ factor, code });
        props.onDone();
      })}
    >
      <p className="gh-notice" role="status">
        {factor === 'totp' ? 'Enter the 6-digit code from your authenticator app.' : 'Enter one of your backup codes. Each works once.'}
      </p>
      {factor === 'totp' ? (
        <Field
          key="totp"
          label="Authenticator code"
          name="code"
          inputMode="numeric"
          autoComplete="one-time-code"
          autoFocus
          maxLength={6}
          value={code}
          onChange={(e) => setCode(e.target.value.replace(/\D/g, ''))}
          error={form.errors.code ?? form.errors[FORM]}
        />
      ) : (
        <Field
          key="backup"
          label="Backup code"
          name="code"
          autoComplete="off"
          autoFocus
          spellCheck={false}
          value={code}
          onChange={(e) => setCode(e.target.value)}
          error={form.errors.code ?? form.errors[FORM]}
        />
      )}
      <Submit busy={form.busy}>Verify</Submit>
      {hasPasskey && passkey.supported ? (
        <>
          <div className="gh-divider">or</div>
          <PasskeyAction label="Use a passkey" step="second-factor" action={passkey} />
        </>
      ) : null}
      <div className="gh-links">
        {other ? (
          <button type="button" className="gh-link" onClick={switchTo}>
            {factor === 'totp' ? 'Use a backup code' : 'Use your authenticator app'}
          </button>
        ) : null}
        {restart}
      </div>
    </form>
  );
}

function TotpSetupStep(props: { onDone: () => void }) {
  const client = useGatehouse();
  const form = useForm(['code']);
  // A passkey made here registers and signs in at once: it brings no backup codes.
  const passkey = usePasskeyAction(async () => {
    await client.signIn.passkeySetup();
    props.onDone();
  });
  const [setup, setSetup] = useState<TotpSetup | null>(null);
  const [loadError, setLoadError] = useState<string | null>(null);
  const [code, setCode] = useState('');
  const [backupCodes, setBackupCodes] = useState<string[] | null>(null);
  useEffect(() => {
    let live = true;
    client.signIn.totpSetup().then(
      (s) => live && setSetup(s),
      (e: Error) => live && setLoadError(e.message),
    );
    return () => {
      live = false;
    };
  }, [client]);

  if (backupCodes) {
    return (
      <BackupCodesStep
        codes={backupCodes}
        onContinue={form.submit(async () => (await client.signIn.activate(), props.onDone()))}
        busy={form.busy}
        error={form.errors[FORM]}
      />
    );
  }
  if (loadError) return <FormError error={loadError} />;
  if (!setup)
    return (
      <div className="gh-row" style={{ justifyContent: 'center' }}>
        <span className="gh-spinner" aria-label="Loading" />
      </div>
    );
  return (
    <form
      className="gh-form"
      noValidate
      data-gh-step="second-factor-setup"
      onSubmit={form.submit(async () => {
        // The session waits until the backup codes have been seen.
        const done = await client.signIn.secondFactor({ factor: 'totp', code, activate: false });
        setBackupCodes(done.backupCodes ?? []);
      })}
    >
      <p className="gh-notice" role="status">
        This application requires two-step verification.{' '}
        {passkey.supported ? 'Set up a passkey on this device, or scan' : 'Scan'} the QR code with an authenticator app, then enter the code it
        shows.
      </p>
      {passkey.supported ? (
        <>
          <PasskeyAction label="Set up a passkey" step="second-factor-setup" action={passkey} />
          <div className="gh-divider">or</div>
        </>
      ) : null}
      <div className="gh-qr-box">
        <QrCode value={setup.otpauthUrl} label="QR code for your authenticator app" />
      </div>
      <p className="gh-muted" style={{ margin: 0 }}>
        Can't scan it? Enter this key in the app instead:
      </p>
      <code className="gh-secret" data-gh-totp-secret="">
        {setup.secret.replace(/(.{4})(?=.)/g, '$1 ')}
      </code>
      <Field
        label="Authenticator code"
        name="code"
        inputMode="numeric"
        autoComplete="one-time-code"
        autoFocus
        maxLength={6}
        value={code}
        onChange={(e) => setCode(e.target.value.replace(/\D/g, ''))}
        error={form.errors.code ?? form.errors[FORM]}
      />
      <Submit busy={form.busy}>Verify and continue</Submit>
    </form>
  );
}

/** The backup codes, shown once: copy or download them, then continue signed in. */
function BackupCodesStep(props: { codes: string[]; onContinue: () => void; busy: boolean; error: string | undefined }) {
  const [copied, setCopied] = useState(false);
  const text = `${props.codes.join('\n')}\n`;
  const download = () => {
    const url = URL.createObjectURL(new Blob([text], { type: 'text/plain' }));
    const a = Object.assign(document.createElement('a'), { href: url, download: 'backup-codes.txt' });
    a.click();
    setTimeout(() => URL.revokeObjectURL(url), 1000);
  };
  return (
    <div className="gh-form" data-gh-step="backup-codes">
      <p className="gh-notice" role="status">
        Two-step verification is on. Save these backup codes somewhere safe: each signs you in once if you lose your authenticator. They are
        shown only now.
      </p>
      <ul className="gh-codes" aria-label="Backup codes">
        {props.codes.map((c) => (
          <li key={c}>
            <code>{c}</code>
          </li>
        ))}
      </ul>
      <div className="gh-row">
        <button
          type="button"
          className="gh-button gh-secondary"
          onClick={() =>
            void navigator.clipboard?.writeText(text).then(
              () => setCopied(true),
              () => undefined,
            )
          }
        >
          {copied ? 'Copied' : 'Copy'}
        </button>
        <button type="button" className="gh-button gh-secondary" onClick={download}>
          Download
        </button>
      </div>
      <FormError error={props.error} />
      <button type="button" className="gh-button" onClick={props.onContinue} disabled={props.busy}>
        I saved them, continue
      </button>
    </div>
  );
}
