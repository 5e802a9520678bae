import { useState } from 'react';
import type { MachineWithSecret, PlatformEnvironment } from '@gatehouse/contract';
import { formatTime } from '../api.js';
import type { Platform } from '../platform.js';
import { ConfirmButton, Copyable, ErrorMessage, Loaded, Section, Table, useAction, useLoad } from '../ui.js';

/** Machines (OAuth 2.0 client credentials, docs/api-keys.md): create, rotate the secret, delete. A secret is shown once. */
export function MachinesTab({ platform, environment }: { platform: Platform; environment: PlatformEnvironment }) {
  const machines = useLoad(() => platform.machines.list(environment.id), [environment.id]);
  const [name, setName] = useState('');
  const [scopes, setScopes] = useState('');
  const [shown, setShown] = useState<{ made: MachineWithSecret; rotated: boolean } | null>(null);
  const create = useAction();
  const rotate = useAction();
  return (
    <Section title="Machines">
      <p className="muted">
        Services that get tokens with OAuth 2.0 client credentials: <code>POST {location.origin}/v1/oauth/token</code> with the machine id
        and its secret. A secret is shown once, when it is made.
      </p>
      <form
        className="row wrap"
        onSubmit={(e) => {
          e.preventDefault();
          void create.run(async () => {
            const list = scopes.split(/[\s,]+/).filter(Boolean);
            const made = await platform.machines.create(environment.id, { name: name.trim(), ...(list.length ? { scopes: list } : {}) });
            setShown({ made, rotated: false });
            setName('');
            setScopes('');
            machines.reload();
          });
        }}
      >
        <label>
          Name
          <input required value={name} onChange={(e) => setName(e.target.value)} name="machine-name" />
        </label>
        <label>
          Scopes (space-separated)
          <input value={scopes} onChange={(e) => setScopes(e.target.value)} name="machine-scopes" placeholder="invoices:read" />
        </label>
        <button type="submit" className="primary" disabled={create.pending}>
          Create machine
        </button>
      </form>
      <ErrorMessage error={create.error ?? rotate.error} />
      {shown && (
        <div className="callout" role="status">
          <p>
            {shown.rotated ? 'New secret for' : 'New machine'} <code>{shown.made.machine.id}</code>. Copy the secret now: it will{' '}
            <strong>not be shown again</strong>.
          </p>
          <Copyable label="Client id" value={shown.made.machine.id} />
          <Copyable label="Client secret" value={shown.made.clientSecret} />
        </div>
      )}
      <Loaded state={machines} what="machines">
        {(list) => (
          <Table headings={['Machine', 'Scopes', 'Created']} actions empty={list.data.length === 0 && 'No machine yet.'}>
            {list.data.map((m) => (
              <tr key={m.id} data-machine-id={m.id}>
                <td>
                  {m.name} <span className="muted">{m.id}</span>
                </td>
                <td>{m.scopes.length ? m.scopes.join(' ') : '—'}</td>
                <td>{formatTime(m.createdAt)}</td>
                <td>
                  <div className="row end">
                    <button
                      type="button"
                      disabled={rotate.pending}
                      onClick={() =>
                        void rotate.run(async () => {
                          setShown({ made: await platform.machines.rotateSecret(environment.id, m.id), rotated: true });
                        })
                      }
                    >
                      New secret
                    </button>
                    <ConfirmButton
                      label="Delete"
                      title={`Delete machine ${m.name}`}
                      message={<p>Its secret stops at once; tokens already issued live out their time. This cannot be undone.</p>}
                      confirmLabel="Delete machine"
                      onConfirm={async () => {
                        await platform.machines.remove(environment.id, m.id);
                        if (shown?.made.machine.id === m.id) setShown(null);
                        machines.reload();
                      }}
                    />
                  </div>
                </td>
              </tr>
            ))}
          </Table>
        )}
      </Loaded>
    </Section>
  );
}
