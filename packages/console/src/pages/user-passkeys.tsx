import type { PasskeyList } from '@gatehouse/contract';
import { formatTime } from '../api.js';
import type { Platform } from '../platform.js';
import { ConfirmButton, Loaded, Section, Table, useLoad } from '../ui.js';

/** The user page's passkeys: each removable (a lost device; support). */
export function UserPasskeys({ platform, environmentId, userId, email }: { platform: Platform; environmentId: string; userId: string; email: string }) {
  const passkeys = useLoad(() => platform.users.passkeys(environmentId, userId), [environmentId, userId]);
  return (
    <Section title="Passkeys">
      <Loaded state={passkeys} what="passkeys">
        {(list: PasskeyList) => (
          <Table headings={['Name', 'Synced', 'Added', 'Last used']} actions empty={list.data.length === 0 && 'No passkey.'}>
            {list.data.map((p) => (
              <tr key={p.id} data-passkey={p.id}>
                <td>{p.name}</td>
                <td>{p.backedUp ? 'Yes' : 'No'}</td>
                <td>{formatTime(p.createdAt)}</td>
                <td>{p.lastUsedAt === null ? 'Never' : formatTime(p.lastUsedAt)}</td>
                <td>
                  <ConfirmButton
                    label="Remove"
                    title="Remove this passkey"
                    message={<p>{email} can no longer sign in or verify with this passkey. Their sessions stay signed in.</p>}
                    confirmLabel="Remove passkey"
                    onConfirm={async () => {
                      await platform.users.removePasskey(environmentId, userId, p.id);
                      passkeys.reload();
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
