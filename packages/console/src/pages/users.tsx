import { useState } from 'react';
import type { Deleted, PlatformEnvironment, SessionList, SessionsRevoked, User, UserPage } from '@gatehouse/contract';
import { formatTime, type Api } from '../api.js';
import { href, navigate } from '../router.js';
import { ConfirmButton, ErrorMessage, Loading, Section, Table, useAction, useLoad } from '../ui.js';
import { UserIdentities } from './user-identities.js';

export function UsersTab(props: { api: Api; environment: PlatformEnvironment; userId: string | undefined; projectId: string }) {
  return props.userId ? <UserDetail {...props} userId={props.userId} /> : <UserSearch {...props} />;
}

function UserSearch({ api, environment, projectId }: { api: Api; environment: PlatformEnvironment; projectId: string }) {
  const [query, setQuery] = useState('');
  const [submitted, setSubmitted] = useState('');
  const [pages, setPages] = useState<string[]>([]);
  const cursor = pages.at(-1);
  const users = useLoad(
    () =>
      api<UserPage>(
        'GET',
        `/v1/platform/environments/${environment.id}/users?limit=25${submitted ? `&query=${encodeURIComponent(submitted)}` : ''}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
      ),
    [environment.id, submitted, cursor],
  );
  return (
    <Section title="Users">
      <form
        role="search"
        className="row wrap"
        onSubmit={(e) => {
          e.preventDefault();
          setPages([]);
          setSubmitted(query.trim());
        }}
      >
        <label>
          Search by email, name or username
          <input type="search" value={query} onChange={(e) => setQuery(e.target.value)} name="query" />
        </label>
        <button type="submit">Search</button>
      </form>
      <ErrorMessage error={users.error} />
      {!users.data && !users.error && <Loading what="users" />}
      {users.data && (
        <>
          <Table
            headings={['Email', 'Name', 'Created', 'Status']}
            empty={users.data.data.length === 0 && (submitted ? `No user matches "${submitted}".` : 'No user yet.')}
          >
            {users.data.data.map((u) => (
              <tr key={u.id}>
                <td>
                  <a href={href('projects', projectId, environment.type, 'users', u.id)}>{u.email}</a>
                </td>
                <td>{[u.firstName, u.lastName].filter(Boolean).join(' ') || '—'}</td>
                <td>{formatTime(u.createdAt)}</td>
                <td>{u.banned ? 'Banned' : u.emailVerified ? 'Verified' : 'Unverified email'}</td>
              </tr>
            ))}
          </Table>
          <div className="row">
            {pages.length > 0 && (
              <button type="button" onClick={() => setPages(pages.slice(0, -1))}>
                Previous
              </button>
            )}
            {users.data.nextCursor && (
              <button type="button" onClick={() => setPages([...pages, users.data!.nextCursor!])}>
                Next
              </button>
            )}
          </div>
        </>
      )}
    </Section>
  );
}

function UserDetail({ api, environment, userId, projectId }: { api: Api; environment: PlatformEnvironment; userId: string; projectId: string }) {
  const base = `/v1/platform/environments/${environment.id}/users/${encodeURIComponent(userId)}`;
  const user = useLoad(() => api<User>('GET', base), [base]);
  const sessions = useLoad(() => api<SessionList>('GET', `${base}/sessions`), [base]);
  const [notice, setNotice] = useState<string | null>(null);
  const ban = useAction();
  if (user.error) return <ErrorMessage error={user.error} />;
  if (!user.data) return <Loading what="the user" />;
  const u = user.data;
  return (
    <>
      <p className="breadcrumbs">
        <a href={href('projects', projectId, environment.type, 'users')}>Users</a> / {u.email}
      </p>
      <Section title={u.email}>
        <dl className="facts">
          <dt>Id</dt>
          <dd>
            <code>{u.id}</code>
          </dd>
          <dt>Name</dt>
          <dd>{[u.firstName, u.lastName].filter(Boolean).join(' ') || '—'}</dd>
          <dt>Username</dt>
          <dd>{u.username ?? '—'}</dd>
          <dt>Email verified</dt>
          <dd>{u.emailVerified ? 'Yes' : 'No'}</dd>
          <dt>Password</dt>
          <dd>{u.passwordEnabled ? 'Set' : 'None'}</dd>
          <dt>Status</dt>
          <dd>{u.banned ? 'Banned' : 'Active'}</dd>
          <dt>Created</dt>
          <dd>{formatTime(u.createdAt)}</dd>
          <dt>Public metadata</dt>
          <dd>
            <code>{JSON.stringify(u.publicMetadata)}</code>
          </dd>
          <dt>Private metadata</dt>
          <dd>
            <code>{JSON.stringify(u.privateMetadata)}</code>
          </dd>
        </dl>
      </Section>
      <UserIdentities api={api} base={base} email={u.email} />
      <Section title="Sessions and access">
        {notice && (
          <p role="status" className="callout">
            {notice}
          </p>
        )}
        <ErrorMessage error={ban.error ?? sessions.error} />
        {sessions.data && (
          <Table
            headings={['Session', 'Signed in', 'Last active', 'Device']}
            actions
            empty={sessions.data.data.length === 0 && 'No live session.'}
          >
            {sessions.data.data.map((s) => (
              <tr key={s.id}>
                <td>
                  <code>{s.id}</code>
                </td>
                <td>{formatTime(s.createdAt)}</td>
                <td>{formatTime(s.lastActiveAt)}</td>
                <td>{s.userAgent ?? '—'}</td>
                <td>
                  <ConfirmButton
                    label="Revoke"
                    title="Revoke this session"
                    message={<p>This device is signed out at once.</p>}
                    confirmLabel="Revoke session"
                    onConfirm={async () => {
                      await api('DELETE', `${base}/sessions/${encodeURIComponent(s.id)}`);
                      sessions.reload();
                    }}
                  />
                </td>
              </tr>
            ))}
          </Table>
        )}
        <div className="row wrap">
          <ConfirmButton
            label="Revoke all sessions"
            title="Revoke all sessions"
            message={<p>{u.email} is signed out everywhere at once: refresh tokens stop working and Gatehouse refuses their access tokens.</p>}
            onConfirm={async () => {
              const { revoked } = await api<SessionsRevoked>('POST', `${base}/sessions/revoke`);
              setNotice(`Revoked ${revoked} session${revoked === 1 ? '' : 's'}.`);
              sessions.reload();
            }}
          />
          {u.banned ? (
            <button type="button" disabled={ban.pending} onClick={() => void ban.run(async () => user.setData(await api<User>('POST', `${base}/unban`)))}>
              Lift ban
            </button>
          ) : (
            <ConfirmButton
              label="Ban"
              title="Ban user"
              message={<p>Every session of {u.email} is revoked and every sign-in is refused until the ban is lifted.</p>}
              confirmLabel="Ban user"
              onConfirm={async () => user.setData(await api<User>('POST', `${base}/ban`))}
            />
          )}
          <ConfirmButton
            label="Delete user"
            title="Delete user"
            message={<p>{u.email} and their sessions are deleted for good. This cannot be undone.</p>}
            onConfirm={async () => {
              await api<Deleted>('DELETE', base);
              navigate('projects', projectId, environment.type, 'users');
            }}
          />
        </div>
      </Section>
    </>
  );
}
