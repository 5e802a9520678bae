import type { UserIdentityList } from '@gatehouse/contract';
import { formatTime } from '../api.js';
import type { Platform } from '../platform.js';
import { ConfirmButton, Loaded, Section, Table, useLoad } from '../ui.js';

/** The user page's connected accounts: the provider identities linked to the user, each unlinkable. */
export function UserIdentities({ platform, environmentId, userId, email }: { platform: Platform; environmentId: string; userId: string; email: string }) {
  const identities = useLoad(() => platform.users.identities(environmentId, userId), [environmentId, userId]);
  return (
    <Section title="Connected accounts">
      <Loaded state={identities} what="connected accounts">
        {(list: UserIdentityList) => (
        <Table headings={['Provider', 'Email at the provider', 'Connection', 'Linked']} actions empty={list.data.length === 0 && 'No connected account.'}>
          {list.data.map((i) => (
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
                    await platform.users.unlinkIdentity(environmentId, userId, i.id);
                    identities.reload();
                  }}
                />
              </td>
            </tr>
          ))}
        </Table>
        )}
      </Loaded>
    </Section>
  );
}
