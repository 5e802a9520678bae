import { useState } from 'react';
import type { OutboxEmail, PlatformEnvironment } from '@gatehouse/contract';
import { formatTime } from '../api.js';
import { PageControls, usePages } from '../paging.js';
import type { Platform } from '../platform.js';
import { Loaded, Section } from '../ui.js';

/** Development: the captured inbox. Production: the outbox, with each delivery's status and error. */
export function EmailsTab({ platform, environment }: { platform: Platform; environment: PlatformEnvironment }) {
  const [recipient, setRecipient] = useState('');
  const [to, setTo] = useState('');
  const emails = usePages((cursor) => platform.emails.list(environment.id, { limit: 50, to, cursor }), [environment.id, to]);
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
        <form
          role="search"
          className="row wrap"
          onSubmit={(e) => {
            e.preventDefault();
            setTo(recipient.trim());
          }}
        >
          <label>
            Recipient address
            <input type="search" value={recipient} placeholder="someone@example.com" onChange={(e) => setRecipient(e.target.value)} name="to" />
          </label>
          <button type="submit">Filter</button>
        </form>
        <Loaded state={emails} what="emails" empty={to ? `No email to ${to}.` : 'No email yet.'}>
          {(page) => (
            <ul className="list" aria-label="Emails">
              {page.data.map((e) => (
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
        </Loaded>
        <PageControls pages={emails} previous="Newer" next="Older" />
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
