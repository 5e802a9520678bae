import { useState } from 'react';
import type { PlatformEnvironment, Role } from '@gatehouse/contract';
import { formatTime } from '../api.js';
import { PageControls, usePages } from '../paging.js';
import type { Platform } from '../platform.js';
import { href } from '../router.js';
import { ConfirmButton, ErrorMessage, Loaded, Pending, Section, Table, useAction, useLoad } from '../ui.js';
import { ApiKeysSection } from './api-keys.js';

export function OrganizationsTab(props: { platform: Platform; environment: PlatformEnvironment; organizationId: string | undefined; projectId: string }) {
  return props.organizationId ? (
    <OrganizationDetail {...props} organizationId={props.organizationId} />
  ) : (
    <>
      <OrganizationList {...props} />
      <Roles platform={props.platform} environment={props.environment} />
    </>
  );
}

function OrganizationList({ platform, environment, projectId }: { platform: Platform; environment: PlatformEnvironment; projectId: string }) {
  const orgs = usePages((cursor) => platform.organizations.list(environment.id, { limit: 50, cursor }), [environment.id]);
  return (
    <Section title="Organizations">
      <Loaded state={orgs} what="organizations">
        {(page) => (
          <Table headings={['Name', 'Slug', 'Created']} empty={page.data.length === 0 && 'No organization yet.'}>
            {page.data.map((o) => (
              <tr key={o.id}>
                <td>
                  <a href={href('projects', projectId, environment.type, 'organizations', o.id)}>{o.name}</a>
                </td>
                <td>{o.slug}</td>
                <td>{formatTime(o.createdAt)}</td>
              </tr>
            ))}
          </Table>
        )}
      </Loaded>
      <PageControls pages={orgs} />
    </Section>
  );
}

function OrganizationDetail(props: { platform: Platform; environment: PlatformEnvironment; organizationId: string; projectId: string }) {
  const { platform, environment, organizationId, projectId } = props;
  const organizations = platform.organizations;
  const org = useLoad(() => organizations.get(environment.id, organizationId), [environment.id, organizationId]);
  const members = usePages((cursor) => organizations.members(environment.id, organizationId, { limit: 50, cursor }), [environment.id, organizationId]);
  const roles = useLoad(() => platform.roles.list(environment.id), [environment.id]);
  const change = useAction();
  if (!org.data) return <Pending state={org} what="the organization" />;
  return (
    <>
      <p className="breadcrumbs">
        <a href={href('projects', projectId, environment.type, 'organizations')}>Organizations</a> / {org.data.name}
      </p>
      <Section title={org.data.name}>
        <dl className="facts">
          <dt>Id</dt>
          <dd>
            <code>{org.data.id}</code>
          </dd>
          <dt>Slug</dt>
          <dd>{org.data.slug}</dd>
          <dt>Requires MFA</dt>
          <dd data-testid="mfa-required">
            {org.data.mfaRequired ? 'Yes: members without a second factor cannot act as it' : 'No'}
          </dd>
        </dl>
      </Section>
      <Section title={`Members of ${org.data.name}`}>
        <ErrorMessage error={change.error} />
        <Loaded state={members} what="members">
          {(page) => (
            <Table headings={['Member', 'Role', 'Joined']} actions>
              {page.data.map((m) => (
                <tr key={m.userId}>
                  <td>{m.email}</td>
                  <td>
                    <select
                      aria-label={`Role of ${m.email}`}
                      value={m.role}
                      disabled={change.pending}
                      onChange={(e) =>
                        void change.run(async () => {
                          await organizations.setRole(environment.id, organizationId, m.userId, e.target.value);
                          members.reload();
                        })
                      }
                    >
                      {(roles.data?.data ?? [{ key: m.role, name: m.role } as Role]).map((r) => (
                        <option key={r.key} value={r.key}>
                          {r.name}
                        </option>
                      ))}
                    </select>
                  </td>
                  <td>{formatTime(m.createdAt)}</td>
                  <td>
                    <ConfirmButton
                      label="Remove"
                      title={`Remove ${m.email}`}
                      message={<p>{m.email} leaves {org.data!.name}. An organization keeps at least one owner.</p>}
                      confirmLabel="Remove member"
                      onConfirm={async () => {
                        await organizations.removeMember(environment.id, organizationId, m.userId);
                        members.reload();
                      }}
                    />
                  </td>
                </tr>
              ))}
            </Table>
          )}
        </Loaded>
        <PageControls pages={members} />
      </Section>
      <Invitations platform={platform} environmentId={environment.id} organizationId={organizationId} roles={roles.data?.data ?? []} />
      <ApiKeysSection platform={platform} environmentId={environment.id} subject={organizationId} />
    </>
  );
}

function Invitations(props: { platform: Platform; environmentId: string; organizationId: string; roles: Role[] }) {
  const { environmentId, organizationId, roles } = props;
  const organizations = props.platform.organizations;
  const invitations = useLoad(() => organizations.pendingInvitations(environmentId, organizationId), [environmentId, organizationId]);
  const [email, setEmail] = useState('');
  const [role, setRole] = useState('member');
  const create = useAction();
  return (
    <Section title="Invitations">
      <form
        className="row wrap"
        onSubmit={(e) => {
          e.preventDefault();
          void create.run(async () => {
            await organizations.invite(environmentId, organizationId, { email, role });
            setEmail('');
            invitations.reload();
          });
        }}
      >
        <label>
          Email
          <input type="email" required value={email} onChange={(e) => setEmail(e.target.value)} />
        </label>
        <label>
          Role
          <select value={role} onChange={(e) => setRole(e.target.value)}>
            {(roles.length ? roles : [{ key: 'member', name: 'Member' } as Role]).map((r) => (
              <option key={r.key} value={r.key}>
                {r.name}
              </option>
            ))}
          </select>
        </label>
        <button type="submit" disabled={create.pending}>
          Invite
        </button>
      </form>
      <ErrorMessage error={create.error} />
      <Loaded state={invitations} what="invitations">
        {(pending) => (
          <Table headings={['Email', 'Role', 'Expires']} actions empty={pending.data.length === 0 && 'No pending invitation.'}>
            {pending.data.map((i) => (
              <tr key={i.id}>
                <td>{i.email}</td>
                <td>{i.role}</td>
                <td>{formatTime(i.expiresAt)}</td>
                <td>
                  <ConfirmButton
                    label="Revoke"
                    title={`Revoke the invitation of ${i.email}`}
                    message={<p>The emailed link stops working.</p>}
                    confirmLabel="Revoke invitation"
                    onConfirm={async () => {
                      await organizations.revokeInvitation(environmentId, organizationId, i.id);
                      invitations.reload();
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

function Roles({ platform, environment }: { platform: Platform; environment: PlatformEnvironment }) {
  const roles = useLoad(() => platform.roles.list(environment.id), [environment.id]);
  const [key, setKey] = useState('');
  const [name, setName] = useState('');
  const [permissions, setPermissions] = useState('');
  const create = useAction();
  return (
    <Section title="Roles and permissions">
      <Loaded state={roles} what="roles">
        {(list) => (
          <Table headings={['Role', 'Key', 'Permissions']} actions>
            {list.data.map((r) => (
              <tr key={r.key}>
                <td>{r.name}</td>
                <td>
                  <code>{r.key}</code>
                </td>
                <td>{r.permissions.join(', ') || '—'}</td>
                <td>
                  {!r.system && (
                    <ConfirmButton
                      label="Delete"
                      title={`Delete role ${r.name}`}
                      message={<p>The role {r.key} is deleted. A role still held by members cannot be deleted.</p>}
                      confirmLabel="Delete role"
                      onConfirm={async () => {
                        await platform.roles.remove(environment.id, r.key);
                        roles.reload();
                      }}
                    />
                  )}
                </td>
              </tr>
            ))}
          </Table>
        )}
      </Loaded>
      <form
        className="row wrap"
        onSubmit={(e) => {
          e.preventDefault();
          void create.run(async () => {
            await platform.roles.create(environment.id, { key, name, permissions: permissions.split(',').map((p) => p.trim()).filter(Boolean) });
            setKey('');
            setName('');
            setPermissions('');
            roles.reload();
          });
        }}
      >
        <label>
          Key
          <input required value={key} placeholder="billing_admin" onChange={(e) => setKey(e.target.value)} />
        </label>
        <label>
          Name
          <input required value={name} placeholder="Billing admin" onChange={(e) => setName(e.target.value)} />
        </label>
        <label>
          Permissions (comma-separated)
          <input value={permissions} placeholder="org:billing:manage" onChange={(e) => setPermissions(e.target.value)} />
        </label>
        <button type="submit" disabled={create.pending}>
          Add custom role
        </button>
      </form>
      <ErrorMessage error={create.error} />
    </Section>
  );
}
