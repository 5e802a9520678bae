import { useState } from 'react';
import type { CreatedSecretKey, PlatformEnvironment } from '@gatehouse/contract';
import { formatTime } from '../api.js';
import type { Platform } from '../platform.js';
import { ConfirmButton, Copyable, ErrorMessage, Loaded, Section, Table, useAction, useLoad } from '../ui.js';

export function KeysTab({ platform, environment }: { platform: Platform; environment: PlatformEnvironment }) {
  const secretKeys = useLoad(() => platform.secretKeys.list(environment.id), [environment.id]);
  const signingKeys = useLoad(() => platform.signingKeys.list(environment.id), [environment.id]);
  const [created, setCreated] = useState<CreatedSecretKey | null>(null);
  const create = useAction();

  return (
    <>
      <Section title="Publishable key">
        <p className="muted">Public: it goes in your frontend. Requests with it must come from an allowed origin (Settings).</p>
        <Copyable label="Publishable key" value={environment.publishableKey} />
        <p className="muted">
          Environment <code>{environment.id}</code> · issuer <code>{`${location.origin}/v1/environments/${environment.id}`}</code>
        </p>
      </Section>

      <Section
        title="Secret keys"
        actions={
          <button
            type="button"
            className="primary"
            disabled={create.pending}
            onClick={() =>
              void create.run(async () => {
                setCreated(await platform.secretKeys.create(environment.id));
                secretKeys.reload();
              })
            }
          >
            Create secret key
          </button>
        }
      >
        <p className="muted">For your backend only. A key's value is shown once, when it is created; only its last characters are kept.</p>
        <ErrorMessage error={create.error} />
        {created && (
          <div className="callout" role="status">
            <p>
              New secret key <code>{created.id}</code>. Copy it now: it will <strong>not be shown again</strong>.
            </p>
            <Copyable label="New secret key" value={created.secretKey} />
          </div>
        )}
        <Loaded state={secretKeys} what="secret keys">
          {(keys) => (
            <Table headings={['Key', 'Created', 'Status']} actions empty={keys.data.length === 0 && 'No secret key.'}>
              {keys.data.map((k) => (
                <tr key={k.id} data-key-id={k.id}>
                  <td>
                    <code>…{k.hint}</code> <span className="muted">{k.id}</span>
                  </td>
                  <td>{formatTime(k.createdAt)}</td>
                  <td>{k.revokedAt ? `Revoked ${formatTime(k.revokedAt)}` : 'Active'}</td>
                  <td>
                    {!k.revokedAt && (
                      <ConfirmButton
                        label="Revoke"
                        title={`Revoke key …${k.hint}`}
                        message={<p>Requests with this key fail at once. This cannot be undone.</p>}
                        confirmLabel="Revoke key"
                        onConfirm={async () => {
                          await platform.secretKeys.revoke(environment.id, k.id);
                          if (created?.id === k.id) setCreated(null);
                          secretKeys.reload();
                        }}
                      />
                    )}
                  </td>
                </tr>
              ))}
            </Table>
          )}
        </Loaded>
      </Section>

      <Section
        title="Signing keys"
        actions={
          <ConfirmButton
            label="Rotate"
            className="secondary"
            title="Rotate the signing key"
            message={
              <p>
                A new key is published now and signs once verifiers have had time to fetch it; the current one stays published until every
                token it signed has expired. No signed-in user is signed out.
              </p>
            }
            confirmLabel="Rotate signing key"
            onConfirm={async () => {
              await platform.signingKeys.rotate(environment.id);
              signingKeys.reload();
            }}
          />
        }
      >
        <Loaded state={signingKeys} what="signing keys">
          {(keys) => (
            <Table
              headings={['Key id', 'Algorithm', 'State', 'Signs from', 'Published until', '']}
              empty={keys.data.length === 0 && 'No key yet: the first token signed creates one.'}
            >
              {keys.data.map((k) => (
                <tr key={k.kid}>
                  <td>
                    <code>{k.kid}</code>
                  </td>
                  <td>{k.algorithm}</td>
                  <td>{k.state}</td>
                  <td>{formatTime(k.activatesAt)}</td>
                  <td>{k.publishUntil ? formatTime(k.publishUntil) : '—'}</td>
                  <td>
                    <ConfirmButton
                      label="Revoke"
                      title={`Revoke signing key ${k.kid}`}
                      message={
                        <p>
                          For a key that may have leaked. It leaves the published keys at once and every access token it signed is refused
                          by Gatehouse at once{k.state === 'active' ? '; a new key signs from now on' : ''}. Sessions stay signed in: their
                          next refresh gets a token from the current key. Backends verifying tokens offline accept its tokens until they
                          fetch the keys again.
                        </p>
                      }
                      confirmLabel="Revoke key"
                      onConfirm={async () => {
                        await platform.signingKeys.revoke(environment.id, k.kid);
                        signingKeys.reload();
                      }}
                    />
                  </td>
                </tr>
              ))}
            </Table>
          )}
        </Loaded>
      </Section>
    </>
  );
}
