import { useState } from 'react';
import type { PlatformEnvironment } from '@gatehouse/contract';
import { formatTime } from '../api.js';
import { PageControls, usePages } from '../paging.js';
import type { Platform } from '../platform.js';
import { href, navigate } from '../router.js';
import { ConfirmButton, ErrorMessage, Loaded, Pending, Section, Table, useAction, useLoad } from '../ui.js';
import { UserIdentities } from './user-identities.js';
import { UserPasskeys } from './user-passkeys.js';
import { Impersonate, UserSecondFactors } from './user-security.js';
import { ApiKeysSection } from './api-keys.js';

export function UsersTab(props: { platform: Platform; environment: PlatformEnvironment; userId: string | undefined; projectId: string }) {
  return props.userId ? <UserDetail {...props} userId={props.userId} /> : <UserSearch {...props} />;
}

function UserSearch({ platform, environment, projectId }: { platform: Platform; environment: PlatformEnvironment; projectId: string }) {
  const [query, setQuery] = useState('');
  const [submitted, setSubmitted] = useState('');
  const users = usePages((cursor) => platform.users.list(environment.id, { limit: 25, query: submitted, cursor }), [environment.id, submitted]);
  return (
    <Section title="Users">
      <form
        role="search"
        className="row wrap"
        onSubmit={(e) => {
          e.preventDefault();
          users.restart();
          setSubmitted(query.trim());
        }}
      >
        <label>
          Search by email, name or username
          <input type="search" value={query} onChange={(e) => setQuery(e.target.value)} name="query" />
        </label>
        <button type="submit">Search</button>
      </form>
      <Loaded state={users} what="users">
        {(page) => (
          <Table
            headings={['Email', 'Name', 'Created', 'Status']}
            empty={page.data.length === 0 && (submitted ? `No user matches "${submitted}".` : 'No user yet.')}
          >
            {page.data.map((u) => (
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
        )}
      </Loaded>
      {users.data && <PageControls pages={users} />}
    </Section>
  );
}

function UserDetail({ platform, environment, userId, projectId }: { platform: Platform; environment: PlatformEnvironment; userId: string; projectId: string }) {
  const users = platform.users;
  const user = useLoad(() => users.get(environment.id, userId), [environment.id, userId]);
  const sessions = useLoad(() => users.sessions(environment.id, userId), [environment.id, userId]);
  const [notice, setNotice] = useState<string | null>(null);
  const ban = useAction();
  if (!user.data) return <Pending state={user} what="the user" />;
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
      <UserIdentities platform={platform} environmentId={environment.id} userId={userId} email={u.email} />
      <UserPasskeys platform={platform} environmentId={environment.id} userId={userId} email={u.email} />
      <UserSecondFactors
        platform={platform}
        environmentId={environment.id}
        user={u}
        onReset={(updated) => {
          user.setData(updated);
          sessions.reload();
        }}
      />
      <ApiKeysSection platform={platform} environmentId={environment.id} subject={userId} />
      <Impersonate platform={platform} environmentId={environment.id} user={u} />
      <Section title="Sessions and access">
        {notice && (
          <p role="status" className="callout">
            {notice}
          </p>
        )}
        <ErrorMessage error={ban.error} />
        <Loaded state={sessions} what="sessions">
          {(live) => (
            <Table
              headings={['Session', 'Signed in', 'Last active', 'Device']}
              actions
              empty={live.data.length === 0 && 'No live session.'}
            >
              {live.data.map((s) => (
                <tr key={s.id}>
                  <td>
                    <code>{s.id}</code>
                  </td>
                  <td>{formatTime(s.createdAt)}</td>
                  <td>{formatTime(s.lastActiveAt)}</td>
                  <td>
                    {s.userAgent ?? '—'}
                    {s.actor && <span className="muted"> · impersonated by {s.actor.sub}</span>}
                  </td>
                  <td>
                    <ConfirmButton
                      label="Revoke"
                      title="Revoke this session"
                      message={<p>This device is signed out at once.</p>}
                      confirmLabel="Revoke session"
                      onConfirm={async () => {
                        await users.revokeSession(environment.id, userId, s.id);
                        sessions.reload();
                      }}
                    />
                  </td>
                </tr>
              ))}
            </Table>
          )}
        </Loaded>
        <div className="row wrap">
          <ConfirmButton
            label="Revoke all sessions"
            title="Revoke all sessions"
            message={<p>{u.email} is signed out everywhere at once: refresh tokens stop working and Gatehouse refuses their access tokens.</p>}
            onConfirm={async () => {
              const { revoked } = await users.revokeSessions(environment.id, userId);
              setNotice(`Revoked ${revoked} session${revoked === 1 ? '' : 's'}.`);
              sessions.reload();
            }}
          />
          {u.banned ? (
            <button type="button" disabled={ban.pending} onClick={() => void ban.run(async () => user.setData(await users.unban(environment.id, userId)))}>
              Lift ban
            </button>
          ) : (
            <ConfirmButton
              label="Ban"
              title="Ban user"
              message={<p>Every session of {u.email} is revoked and every sign-in is refused until the ban is lifted.</p>}
              confirmLabel="Ban user"
              onConfirm={async () => user.setData(await users.ban(environment.id, userId))}
            />
          )}
          <ConfirmButton
            label="Delete user"
            title="Delete user"
            message={<p>{u.email} and their sessions are deleted for good. This cannot be undone.</p>}
            onConfirm={async () => {
              await users.remove(environment.id, userId);
              navigate('projects', projectId, environment.type, 'users');
            }}
          />
        </div>
      </Section>
    </>
  );
}
