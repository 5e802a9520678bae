import { formatTime } from '../api.js';
import { PageControls, usePages } from '../paging.js';
import type { Platform } from '../platform.js';
import { ConfirmButton, Loaded, Section, Table } from '../ui.js';

/** The API keys of one user or organization (`subject`), each revocable; keys are created by their owners (POST /v1/me/api-keys…). */
export function ApiKeysSection(props: { platform: Platform; environmentId: string; subject: string }) {
  const { platform, environmentId, subject } = props;
  const keys = usePages((cursor) => platform.apiKeys.list(environmentId, subject, { limit: 25, cursor }), [environmentId, subject]);
  return (
    <Section title="API keys">
      <p className="muted">Secrets are shown to their owner once, at creation; revoking a key stops it at once on every node.</p>
      <Loaded state={keys} what="API keys">
        {(page) => (
          <Table headings={['Name', 'Scopes', 'Created', 'Expires', 'Last used']} actions empty={page.data.length === 0 && 'No API key.'}>
            {page.data.map((k) => (
              <tr key={k.id} data-api-key-id={k.id}>
                <td>
                  {k.name} <span className="muted">{k.id}</span>
                </td>
                <td>{k.scopes.length ? k.scopes.join(' ') : '—'}</td>
                <td>{formatTime(k.createdAt)}</td>
                <td>{k.expiresAt === null ? 'Never' : formatTime(k.expiresAt)}</td>
                <td>{formatTime(k.lastUsedAt)}</td>
                <td>
                  <ConfirmButton
                    label="Revoke"
                    title={`Revoke API key ${k.name}`}
                    message={<p>Requests with this key fail at once. This cannot be undone.</p>}
                    confirmLabel="Revoke key"
                    onConfirm={async () => {
                      await platform.apiKeys.revoke(environmentId, k.id);
                      keys.restart();
                      keys.reload();
                    }}
                  />
                </td>
              </tr>
            ))}
          </Table>
        )}
      </Loaded>
      {keys.data && <PageControls pages={keys} />}
    </Section>
  );
}
