import { useState } from 'react';
import type { AuditLogPage } from '@gatehouse/contract';
import { formatTime, type Api } from '../api.js';
import { ErrorMessage, Loading, Section, Table, useLoad } from '../ui.js';

export function AuditPage({ api }: { api: Api }) {
  const [pages, setPages] = useState<string[]>([]);
  const cursor = pages.at(-1);
  const log = useLoad(() => api<AuditLogPage>('GET', `/v1/platform/audit-log?limit=50${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`), [cursor]);
  return (
    <>
      <h1>Audit log</h1>
      <Section title="Changes made through the platform API" actions={<button type="button" onClick={log.reload}>Refresh</button>}>
        <ErrorMessage error={log.error} />
        {!log.data && !log.error && <Loading what="the audit log" />}
        {log.data && (
          <Table headings={['When', 'Who', 'What', 'Target']} empty={log.data.data.length === 0 && 'Nothing yet.'}>
            {log.data.data.map((e) => (
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
        <div className="row">
          {pages.length > 0 && (
            <button type="button" onClick={() => setPages(pages.slice(0, -1))}>
              Newer
            </button>
          )}
          {log.data?.nextCursor && (
            <button type="button" onClick={() => setPages([...pages, log.data!.nextCursor!])}>
              Older
            </button>
          )}
        </div>
      </Section>
    </>
  );
}
