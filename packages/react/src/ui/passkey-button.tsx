import { useEffect, useRef, useState } from 'react';
import { PasskeyError, passkeysSupported } from '@gatehouse/js';
import { useGatehouse } from '../context.js';
import { errorsFrom, FORM } from './primitives.js';

function KeyIcon() {
  return (
    <svg className="gh-provider-icon" width="18" height="18" viewBox="0 0 24 24" fill="none" stroke="currentColor" strokeWidth="2" aria-hidden="true">
      <circle cx="8" cy="15" r="4" />
      <path d="M10.8 12.2 20 3M16 7l3 3M14 9l2 2" strokeLinecap="round" />
    </svg>
  );
}

/**
 * SignIn's "Sign in with a passkey" (discoverable: the browser lists this site's passkeys), then
 * an "or" before the other methods. Hidden where the browser has no WebAuthn (or, as the only
 * method, says so with `unsupported`).
 */
export function PasskeyButton(props: { onDone: () => void; divider: boolean; disabled?: boolean; unsupported?: string }) {
  const client = useGatehouse();
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | undefined>();
  // Decided after mount: a server render (Next.js) has no WebAuthn, and the first client render must match it.
  const [supported, setSupported] = useState(false);
  useEffect(() => setSupported(passkeysSupported()), []);
  if (!supported) return props.unsupported ? <p className="gh-notice" role="status">{props.unsupported}</p> : null;
  const start = async () => {
    setBusy(true);
    setError(undefined);
    try {
      await client.signIn.passkey();
      props.onDone();
    } catch (e) {
      // Closing the browser's dialog is a choice, not an error to shout about.
      setError(e instanceof PasskeyError && e.reason === 'cancelled' ? undefined : errorsFrom(e, [])[FORM]);
    } finally {
      setBusy(false);
    }
  };
  return (
    <>
      <div className="gh-alternatives" role="group" aria-label="Passkey">
        <button type="button" className="gh-button gh-secondary gh-provider" data-gh-passkey="" onClick={() => void start()} disabled={busy || props.disabled} aria-busy={busy}>
          {busy ? <span className="gh-spinner" aria-hidden="true" /> : <KeyIcon />}
          <span>Sign in with a passkey</span>
        </button>
        {error ? (
          <p className="gh-form-error" role="alert">
            {error}
          </p>
        ) : null}
      </div>
      {props.divider ? <div className="gh-divider">or</div> : null}
    </>
  );
}

/**
 * Passkeys in the email field's autofill (conditional mediation; the field carries
 * `autocomplete="username webauthn"`): a pending request while `enabled`, aborted when the form
 * goes. A passkey picked there signs in and calls `onDone`.
 */
export function usePasskeyAutofill(enabled: boolean, onDone: () => void): void {
  const client = useGatehouse();
  const done = useRef(onDone);
  done.current = onDone;
  useEffect(() => {
    if (!enabled || !passkeysSupported()) return;
    const controller = new AbortController();
    client.signIn.passkey({ autofill: true, signal: controller.signal }).then(
      () => done.current(),
      // Unsupported, aborted, or refused: the other methods stay; the button reports its own errors.
      () => undefined,
    );
    return () => controller.abort();
  }, [client, enabled]);
}
