import { useState } from 'react';
import type { OperatorInvitation, OperatorPage } from '@gatehouse/contract';
import { useUser } from '@gatehouse/react';
import { formatTime, type Api } from '../api.js';
import { ConfirmButton, Copyable, ErrorMessage, Loading, Section, Table, useAction, useLoad } from '../ui.js';

export function OperatorsPage({ api }: { api: Api }) {
  const [pages, setPages] = useState<string[]>([]);
  const cursor = pages.at(-1);
  const operators = useLoad(() => api<OperatorPage>('GET', `/v1/platform/operators?limit=50${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`), [cursor]);
  const { user } = useUser();
  const [email, setEmail] = useState('');
  const [invited, setInvited] = useState<OperatorInvitation | null>(null);
  const invite = useAction();
  return (
    <>
      <h1>Operators</h1>
      <Section title="Invite an operator">
        <p className="muted">Operators manage every project of this Gatehouse. The invitation is emailed and is a one-time link, valid 7 days.</p>
        <form
          className="row wrap"
          onSubmit={(e) => {
            e.preventDefault();
            void invite.run(async () => {
              setInvited(await api<OperatorInvitation>('POST', '/v1/platform/operators/invitations', { email }));
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
        <ErrorMessage error={operators.error} />
        {!operators.data && !operators.error && <Loading what="operators" />}
        {operators.data && (
          <Table headings={['Email', 'Name', 'Since']} actions>
            {operators.data.data.map((o) => (
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
                      await api('DELETE', `/v1/platform/operators/${o.id}`);
                      operators.reload();
                    }}
                  />
                </td>
              </tr>
            ))}
          </Table>
        )}
        <div className="row">
          {pages.length > 0 && (
            <button type="button" onClick={() => setPages(pages.slice(0, -1))}>
              Newer
            </button>
          )}
          {operators.data?.nextCursor && (
            <button type="button" onClick={() => setPages([...pages, operators.data!.nextCursor!])}>
              Older
            </button>
          )}
        </div>
      </Section>
    </>
  );
}
