import type { Platform } from '../platform.js';
import { formatTime } from '../api.js';
import { PageControls, usePages } from '../paging.js';
import { Loaded, Section, Table } from '../ui.js';

export function AuditPage({ platform }: { platform: Platform }) {
  const log = usePages((cursor) => platform.auditLog({ limit: 50, cursor }), []);
  return (
    <>
      <h1>Audit log</h1>
      <Section title="Changes made through the platform API" actions={<button type="button" onClick={log.reload}>Refresh</button>}>
        <Loaded state={log} what="the audit log">
          {(page) => (
            <Table headings={['When', 'Who', 'What', 'Target']} empty={page.data.length === 0 && 'Nothing yet.'}>
              {page.data.map((e) => (
                <tr key={e.id}>
                  <td>{formatTime(e.at)}</td>
                  <td>{e.actor.kind === 'platform_key' ? 'Platform key' : (e.actor.email ?? e.actor.id ?? 'Setup link')}</td>
                  <td>
                    <code>{e.action}</code> <span className="muted">{e.status}</span>
                  </td>
                  <td>
                    <code>{e.target ?? '—'}</code>
                  </td>
                </tr>
              ))}
            </Table>
          )}
        </Loaded>
        <PageControls pages={log} previous="Newer" next="Older" />
      </Section>
    </>
  );
}
