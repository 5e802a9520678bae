import { useState } from 'react';
import type { OutboxEmail, OutboxEmailList, PlatformEnvironment } from '@gatehouse/contract';
import { formatTime, type Api } from '../api.js';
import { ErrorMessage, Loading, Section, useLoad } from '../ui.js';

/** Development: the captured inbox. Production: the outbox, with each delivery's status and error. */
export function EmailsTab({ api, environment }: { api: Api; environment: PlatformEnvironment }) {
  const emails = useLoad(() => api<OutboxEmailList>('GET', `/v1/platform/environments/${environment.id}/emails?limit=100`), [environment.id]);
  const [openId, setOpenId] = useState<string | null>(null);
  const open = emails.data?.data.find((e) => e.id === openId);
  const development = environment.type === 'development';
  return (
    <div className="split">
      <Section
        title={development ? 'Inbox (captured, never sent)' : 'Outbox'}
        actions={
          <button type="button" onClick={emails.reload}>
            Refresh
          </button>
        }
      >
        <p className="muted">
          {development
            ? 'Development environments never send email: every message is captured here, links included.'
            : 'Production email is delivered through SMTP_URL; failed deliveries show their error.'}
        </p>
        <ErrorMessage error={emails.error} />
        {!emails.data && !emails.error && <Loading what="emails" />}
        {emails.data && emails.data.data.length === 0 && <p className="muted">No email yet.</p>}
        {emails.data && emails.data.data.length > 0 && (
          <ul className="list" aria-label="Emails">
            {emails.data.data.map((e) => (
              <li key={e.id}>
                <button type="button" className="list-item" aria-pressed={e.id === openId} onClick={() => setOpenId(e.id)}>
                  <strong>{e.subject}</strong>
                  <span className="muted">
                    to {e.to} · {formatTime(e.createdAt)} · <StatusBadge email={e} />
                  </span>
                </button>
              </li>
            ))}
          </ul>
        )}
      </Section>
      {open && <EmailView email={open} />}
    </div>
  );
}

function StatusBadge({ email }: { email: OutboxEmail }) {
  return <span className={`badge ${email.status}`}>{email.status}</span>;
}

const LINK = /https?:\/\/[^\s<>"')]+/g;

function EmailView({ email }: { email: OutboxEmail }) {
  const links = [...new Set(email.text.match(LINK) ?? [])];
  // Shown in a sandboxed frame: no script runs, and links open in a new tab.
  const document = `<!doctype html><html><head><base target="_blank"></head><body>${email.html}</body></html>`;
  return (
    <Section title={email.subject}>
      <dl className="facts">
        <dt>To</dt>
        <dd>{email.to}</dd>
        <dt>Kind</dt>
        <dd>{email.kind}</dd>
        <dt>Status</dt>
        <dd>
          <StatusBadge email={email} /> {email.attempts > 0 && `after ${email.attempts} attempt${email.attempts === 1 ? '' : 's'}`}
          {email.sentAt && ` · sent ${formatTime(email.sentAt)}`}
        </dd>
        {email.lastError && (
          <>
            <dt>Error</dt>
            <dd className="error">{email.lastError}</dd>
          </>
        )}
      </dl>
      {links.length > 0 && (
        <>
          <h3>Links</h3>
          <ul>
            {links.map((link) => (
              <li key={link}>
                <a href={link} target="_blank" rel="noopener noreferrer" className="email-link">
                  {link}
                </a>
              </li>
            ))}
          </ul>
        </>
      )}
      <iframe title={`Email: ${email.subject}`} className="email-frame" sandbox="allow-popups allow-popups-to-escape-sandbox" srcDoc={document} />
      <details>
        <summary>Plain text</summary>
        <pre>{email.text}</pre>
      </details>
    </Section>
  );
}
