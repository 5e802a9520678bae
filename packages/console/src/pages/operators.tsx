import { useState } from 'react';
import type { OperatorInvitation } from '@gatehouse/contract';
import { useUser } from '@gatehouse/react';
import { formatTime } from '../api.js';
import { PageControls, usePages } from '../paging.js';
import type { Platform } from '../platform.js';
import { ConfirmButton, Copyable, ErrorMessage, Loaded, Section, Table, useAction } from '../ui.js';

export function OperatorsPage({ platform }: { platform: Platform }) {
  const operators = usePages((cursor) => platform.operators.list({ limit: 50, cursor }), []);
  const { user } = useUser();
  const [email, setEmail] = useState('');
  const [invited, setInvited] = useState<OperatorInvitation | null>(null);
  const invite = useAction();
  return (
    <>
      <h1>Operators</h1>
      <Section title="Invite an operator">
        <p className="muted">
          Operators manage every project of this Gatehouse. The invitation is emailed and is a one-time link, valid 7 days.
        </p>
        <form
          className="row wrap"
          onSubmit={(e) => {
            e.preventDefault();
            void invite.run(async () => {
              setInvited(await platform.operators.invite(email));
              setEmail('');
            });
          }}
        >
          <label>
            Email
            <input type="email" required value={email} onChange={(e) => setEmail(e.target.value)} name="email" />
          </label>
          <button type="submit" className="primary" disabled={invite.pending}>
            Send invitation
          </button>
        </form>
        <ErrorMessage error={invite.error} />
        {invited && (
          <div className="callout" role="status">
            <p>Invitation sent to {invited.email}. Without mail delivery, pass on this link (shown once):</p>
            <Copyable label="Invitation link" value={invited.url} />
          </div>
        )}
      </Section>
      <Section title="Operators">
        <Loaded state={operators} what="operators">
          {(page) => (
            <Table headings={['Email', 'Name', 'Since']} actions>
              {page.data.map((o) => (
                <tr key={o.id}>
                  <td>
                    {o.email} {o.id === user?.id && <span className="muted">(you)</span>}
                  </td>
                  <td>{[o.firstName, o.lastName].filter(Boolean).join(' ') || '—'}</td>
                  <td>{formatTime(o.createdAt)}</td>
                  <td>
                    <ConfirmButton
                      label="Remove"
                      title={`Remove operator ${o.email}`}
                      message={<p>{o.email} can no longer sign in to the console. The last operator cannot be removed.</p>}
                      confirmLabel="Remove operator"
                      onConfirm={async () => {
                        await platform.operators.remove(o.id);
                        operators.reload();
                      }}
                    />
                  </td>
                </tr>
              ))}
            </Table>
          )}
        </Loaded>
        <PageControls pages={operators} previous="Newer" next="Older" />
      </Section>
    </>
  );
}
