import { useEffect, useState } from 'react';
import { GatehouseError, isReverificationRequired, PasskeyError, passkeysSupported, type MfaStatus, type ReverifyParams } from '@gatehouse/js';
import { useGatehouse, useGatehouseState } from '../context.js';
import { Field, FORM, Submit, useForm } from './primitives.js';

type Method = 'password' | 'passkey' | 'code' | 'backupCode';

const METHOD_LABELS: Record<Method, { field: string; choose: string }> = {
  password: { field: 'Password', choose: 'Use your password' },
  passkey: { field: 'Passkey', choose: 'Use a passkey' },
  code: { field: 'Authenticator code', choose: 'Use your authenticator app' },
  backupCode: { field: 'Backup code', choose: 'Use a backup code' },
};

interface Pending {
  retry: () => Promise<unknown>;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
  /** Only second factors count (an organization that requires MFA). */
  secondFactor: boolean;
}

export interface Reverification {
  pending: Pending | null;
  /**
   * Runs `action`; when it is refused with `reverification_required` (or, with `secondFactor`,
   * `second_factor_required`), asks the user inline (`<ReverifyPrompt/>`), calls `reverify`, and runs
   * it again. Settles when the action finally succeeds, fails, or the user cancels.
   */
  run<T>(action: () => Promise<T>, options?: { secondFactor?: boolean }): Promise<T>;
  cancel(): void;
  /** Closes the prompt once the retry settled. */
  finish(): void;
}

/** The retry-after-reverification flow of one section (Clerk's `useReverification`, inline). */
export function useReverification(): Reverification {
  const [pending, setPending] = useState<Pending | null>(null);
  const run = async <T,>(action: () => Promise<T>, options: { secondFactor?: boolean } = {}): Promise<T> => {
    try {
      return await action();
    } catch (error) {
      const asks = isReverificationRequired(error) || (options.secondFactor && error instanceof GatehouseError && error.code === 'second_factor_required');
      if (!asks) throw error;
      return new Promise<T>((resolve, reject) =>
        setPending({ retry: action, resolve: resolve as (value: unknown) => void, reject, secondFactor: options.secondFactor ?? false }),
      );
    }
  };
  const cancel = () => {
    pending?.reject(new GatehouseError({ status: 0, code: 'reverification_required', message: 'Not changed: confirm it is you to make this change.' }));
    setPending(null);
  };
  return { pending, run, cancel, finish: () => setPending(null) };
}

/**
 * Asks for the password, a passkey, an authenticator code or a backup code (those the user has,
 * read from GET /v1/me/mfa when the prompt opens), then retries the refused change.
 */
export function ReverifyPrompt({ reverification }: { reverification: Reverification }) {
  const client = useGatehouse();
  const user = useGatehouseState().user;
  const pending = reverification.pending;
  const [mfa, setMfa] = useState<MfaStatus | null>(null);
  useEffect(() => {
    if (!pending) return;
    let live = true;
    client.user.mfa.get().then(
      (status) => live && setMfa(status),
      () => undefined,
    );
    return () => {
      live = false;
    };
  }, [client, pending]);
  // Until the user's factors are known, what the user object says (twoFactorEnabled: TOTP or a passkey).
  const methods: Method[] = [
    ...(user?.passwordEnabled && !pending?.secondFactor ? (['password'] as const) : []),
    ...(mfa
      ? [
          ...(mfa.passkeys > 0 && passkeysSupported() ? (['passkey'] as const) : []),
          ...(mfa.totp.enabled ? (['code'] as const) : []),
          ...(mfa.backupCodes.remaining > 0 ? (['backupCode'] as const) : []),
        ]
      : user?.twoFactorEnabled
        ? (['code', 'backupCode'] as const)
        : []),
  ];
  const [method, setMethod] = useState<Method | null>(null);
  const [value, setValue] = useState('');
  // Every refusal (a wrong password or code is invalid_credentials) shows under the one field.
  const form = useForm([]);
  if (!pending) return null;
  const chosen = method && methods.includes(method) ? method : methods[0];
  const confirmed = async (params: ReverifyParams | { passkey: true }) => {
    try {
      await client.reverify(params);
    } catch (error) {
      // Closing the passkey dialog leaves the prompt as it was.
      if (error instanceof PasskeyError && error.reason === 'cancelled') return;
      throw error;
    }
    setValue('');
    try {
      pending.resolve(await pending.retry());
    } catch (error) {
      pending.reject(error);
    }
    reverification.finish();
  };
  return (
    <div className="gh-box gh-reverify" role="group" aria-labelledby="gh-reverify-title">
      <div>
        <div className="gh-name" id="gh-reverify-title">{pending.secondFactor ? 'Verify your second factor' : 'Confirm it’s you'}</div>
        <div className="gh-muted">
          {pending.secondFactor
            ? 'This organization requires two-step verification: verify a second factor to continue.'
            : 'This change needs a recent verification.'}
        </div>
      </div>
      {chosen ? (
        <form className="gh-form" noValidate onSubmit={form.submit(() =>
          confirmed(chosen === 'passkey' ? { passkey: true } : ({ [chosen]: value } as ReverifyParams)),
        )}>
          {chosen === 'passkey' ? (
            <>
              <p className="gh-muted" style={{ margin: 0 }}>Use your passkey (fingerprint, face or screen lock) to confirm.</p>
              {form.errors[FORM] ? <p className="gh-form-error" role="alert">{form.errors[FORM]}</p> : null}
            </>
          ) : (
            <Field label={METHOD_LABELS[chosen].field} name={chosen} type={chosen === 'password' ? 'password' : 'text'} autoFocus
              autoComplete={chosen === 'password' ? 'current-password' : 'one-time-code'} inputMode={chosen === 'code' ? 'numeric' : undefined}
              value={value} onChange={(e) => setValue(e.target.value)} error={form.errors[FORM]} />
          )}
          <div className="gh-row">
            <Submit busy={form.busy}>{chosen === 'passkey' ? 'Use a passkey' : 'Confirm'}</Submit>
            <button type="button" className="gh-button gh-secondary" onClick={reverification.cancel}>Cancel</button>
          </div>
          {methods.length > 1 ? (
            <div className="gh-row" style={{ flexWrap: 'wrap', gap: 16 }}>
              {methods.filter((m) => m !== chosen).map((m) => (
                <button key={m} type="button" className="gh-link" onClick={() => (setMethod(m), setValue(''), form.setErrors({}))}>{METHOD_LABELS[m].choose}</button>
              ))}
            </div>
          ) : null}
        </form>
      ) : (
        <>
          <p className="gh-form-error">Add an authenticator app to your account first, then verify with it here.</p>
          <div><button type="button" className="gh-button gh-secondary" onClick={reverification.cancel}>Cancel</button></div>
        </>
      )}
    </div>
  );
}
