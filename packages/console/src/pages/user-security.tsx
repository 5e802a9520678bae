import { useState } from 'react';
import type { ActorToken, User } from '@gatehouse/contract';
import { useAuth } from '@gatehouse/react';
import { formatTime } from '../api.js';
import type { Platform } from '../platform.js';
import { ConfirmButton, Copyable, ErrorMessage, Loaded, Section, useAction, useLoad } from '../ui.js';

/** A user's second factors, with the support reset (DELETE /v1/users/{userId}/mfa). */
export function UserSecondFactors(props: { platform: Platform; environmentId: string; user: User; onReset: (user: User) => void }) {
  const { platform, environmentId, user } = props;
  const mfa = useLoad(() => platform.users.mfa(environmentId, user.id), [environmentId, user.id]);
  const [notice, setNotice] = useState<string | null>(null);
  return (
    <Section title="Second factors">
      {notice && (
        <p role="status" className="callout">
          {notice}
        </p>
      )}
      <Loaded state={mfa} what="second factors">
        {(status) => (
          <>
            <dl className="facts" data-testid="second-factors">
              <dt>Two-factor</dt>
              <dd>{user.twoFactorEnabled ? 'Enabled' : 'Off'}</dd>
              <dt>Authenticator app (TOTP)</dt>
              <dd>{status.totp.enabled ? `Enabled${status.totp.createdAt ? ` ${formatTime(status.totp.createdAt)}` : ''}` : 'Not set up'}</dd>
              <dt>Backup codes left</dt>
              <dd>{status.backupCodes.remaining}</dd>
              <dt>Passkeys</dt>
              <dd>{status.passkeys}</dd>
            </dl>
            {(status.totp.enabled || status.backupCodes.remaining > 0 || status.passkeys > 0) && (
              <ConfirmButton
                label="Reset MFA"
                title="Reset second factors"
                message={
                  <p>
                    Every second factor of {user.email} is removed (authenticator app, backup codes, passkeys) and they are signed out
                    everywhere. Do this only once you are sure who is asking.
                  </p>
                }
                confirmLabel="Reset MFA"
                onConfirm={async () => {
                  props.onReset(await platform.users.resetMfa(environmentId, user.id));
                  setNotice('Second factors removed; the user was signed out everywhere.');
                  mfa.reload();
                }}
              />
            )}
          </>
        )}
      </Loaded>
    </Section>
  );
}

/**
 * Impersonation: an actor token acted by the signed-in operator (the server names them, whatever
 * is sent), whose one-time url signs in as the user on the environment's hosted page.
 */
export function Impersonate(props: { platform: Platform; environmentId: string; user: User }) {
  const { platform, environmentId, user } = props;
  const auth = useAuth();
  const [token, setToken] = useState<ActorToken | null>(null);
  const create = useAction();
  return (
    <Section
      title="Impersonate"
      actions={
        <button
          type="button"
          disabled={create.pending || user.banned || !auth.userId}
          onClick={() =>
            void create.run(async () => {
              const minted = await platform.users.impersonate(environmentId, user.id, auth.userId!);
              setToken(minted);
              window.open(minted.url, '_blank', 'noopener');
            })
          }
        >
          Impersonate
        </button>
      }
    >
      <p className="muted">
        Signs you in as {user.email} on the hosted page, for at most an hour, recorded in the audit log. The session cannot change
        the password, second factors, passkeys or API keys, nor delete the account.
      </p>
      <ErrorMessage error={create.error} />
      {token && (
        <div className="callout" role="status">
          <p>
            A new tab opened the link below. It works once, until {formatTime(token.expiresAt)}; open it in a private window to keep your
            own sessions apart.
          </p>
          <p>
            <a href={token.url} target="_blank" rel="noopener noreferrer">
              Open as {user.email}
            </a>
          </p>
          <Copyable label="Impersonation link" value={token.url} />
        </div>
      )}
    </Section>
  );
}
