import type { UserIdentityList } from '@gatehouse/contract';
import { formatTime, type Api } from '../api.js';
import { ConfirmButton, ErrorMessage, Section, Table, useLoad } from '../ui.js';

/** The user page's connected accounts: the provider identities linked to the user, each unlinkable. */
export function UserIdentities({ api, base, email }: { api: Api; base: string; email: string }) {
  const identities = useLoad(() => api<UserIdentityList>('GET', `${base}/identities`), [base]);
  return (
    <Section title="Connected accounts">
      <ErrorMessage error={identities.error} />
      {identities.data && (
        <Table headings={['Provider', 'Email at the provider', 'Connection', 'Linked']} actions empty={identities.data.data.length === 0 && 'No connected account.'}>
          {identities.data.data.map((i) => (
            <tr key={i.id} data-identity={i.id}>
              <td>{i.provider}</td>
              <td>{i.email ?? '—'}</td>
              <td>
                <code>{i.connectionId}</code>
              </td>
              <td>{formatTime(i.createdAt)}</td>
              <td>
                <ConfirmButton
                  label="Unlink"
                  title="Unlink this account"
                  message={<p>{email} can no longer sign in with this {i.provider} account. Refused when it is their last way to sign in.</p>}
                  confirmLabel="Unlink"
                  onConfirm={async () => {
                    await api('DELETE', `${base}/identities/${encodeURIComponent(i.id)}`);
                    identities.reload();
                  }}
                />
              </td>
            </tr>
          ))}
        </Table>
      )}
    </Section>
  );
}
