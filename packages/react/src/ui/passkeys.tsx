import { useEffect, useState } from 'react';
import { GatehouseError, PasskeyError, passkeysSupported, type Passkey } from '@gatehouse/js';
import { useGatehouse } from '../context.js';
import { errorsFrom, FORM, FormError } from './primitives.js';
import { ReverifyPrompt, useReverification } from './reverify.js';
import { useEnvironment } from './sign-in.js';

function failure(error: unknown): string | undefined {
  if (error instanceof PasskeyError && error.reason === 'cancelled') return undefined;
  // The prompt was cancelled: its message says the change was not made.
  if (error instanceof GatehouseError && error.code === 'reverification_required') return error.message;
  return errorsFrom(error, [])[FORM];
}

/**
 * UserProfile's "Passkeys": the user's passkeys with Rename and Remove, and "Add a passkey" (this
 * device's WebAuthn); both need a recent verification, asked inline (`ReverifyPrompt`) and then
 * retried. Shown while the environment takes passkeys (authMethods.passkey, or mfa not
 * "off") and the browser has WebAuthn.
 */
export function PasskeysSection() {
  const client = useGatehouse();
  const { environment } = useEnvironment();
  const [passkeys, setPasskeys] = useState<Passkey[] | null>(null);
  const [error, setError] = useState<string | undefined>();
  const [busy, setBusy] = useState(false);
  const [editing, setEditing] = useState<{ id: string; name: string } | null>(null);
  const reverification = useReverification();
  const open = Boolean(environment && (environment.authMethods.passkey || environment.mfa !== 'off'));
  useEffect(() => {
    if (open) client.user.passkeys.list().then(setPasskeys, (e: unknown) => setError(failure(e)));
  }, [client, open]);
  if (!open) return null;

  const act = async (work: () => Promise<unknown>) => {
    setBusy(true);
    setError(undefined);
    try {
      await work();
      setPasskeys(await client.user.passkeys.list());
    } catch (e) {
      setError(failure(e));
    } finally {
      setBusy(false);
    }
  };

  return (
    <section className="gh-section" aria-labelledby="gh-passkeys-title" data-gh-section="passkeys">
      <h2 className="gh-section-title" id="gh-passkeys-title">Passkeys</h2>
      <p className="gh-muted">Sign in with your fingerprint, face or screen lock instead of a password.</p>
      <FormError error={error} />
      <ReverifyPrompt reverification={reverification} />
      <ul className="gh-list">
        {(passkeys ?? []).map((p) => (
          <li key={p.id} data-gh-passkey-id={p.id}>
            {editing?.id === p.id ? (
              <form
                className="gh-row"
                style={{ flex: 1 }}
                onSubmit={(e) => {
                  e.preventDefault();
                  const name = editing.name.trim();
                  if (name) void act(async () => (await client.user.passkeys.rename(p.id, name), setEditing(null)));
                }}
              >
                <input className="gh-input" aria-label="Passkey name" maxLength={100} autoFocus value={editing.name} onChange={(e) => setEditing({ id: p.id, name: e.target.value })} />
                <button type="submit" className="gh-button gh-small" disabled={busy}>Save</button>
                <button type="button" className="gh-button gh-secondary gh-small" onClick={() => setEditing(null)}>Cancel</button>
              </form>
            ) : (
              <>
                <div style={{ flex: 1, minWidth: 0 }}>
                  <div className="gh-name gh-ellipsis">
                    {p.name} {p.backedUp ? <span className="gh-badge">Synced</span> : null}
                  </div>
                  <div className="gh-muted">
                    Added {new Date(p.createdAt).toLocaleDateString()}
                    {p.lastUsedAt ? ` · last used ${new Date(p.lastUsedAt).toLocaleString()}` : ' · never used'}
                  </div>
                </div>
                <button type="button" className="gh-button gh-secondary gh-small" disabled={busy} onClick={() => setEditing({ id: p.id, name: p.name })}>
                  Rename
                </button>
                <button type="button" className="gh-button gh-danger gh-small" disabled={busy} aria-label={`Remove ${p.name}`} onClick={() => void act(() => reverification.run(() => client.user.passkeys.remove(p.id)))}>
                  Remove
                </button>
              </>
            )}
          </li>
        ))}
      </ul>
      {passkeysSupported() ? (
        <button type="button" className="gh-button gh-secondary" data-gh-add-passkey="" disabled={busy} aria-busy={busy} onClick={() => void act(() => reverification.run(() => client.user.passkeys.create()))}>
          {busy ? <span className="gh-spinner" aria-hidden="true" /> : null}
          Add a passkey
        </button>
      ) : (
        <p className="gh-muted">This browser cannot make passkeys.</p>
      )}
    </section>
  );
}
