import { useState } from 'react';
import type { Invitation, InvitationList, MemberPage, Organization, OrganizationPage, PlatformEnvironment, Role, RoleList } from '@gatehouse/contract';
import { formatTime, type Api } from '../api.js';
import { href } from '../router.js';
import { ConfirmButton, ErrorMessage, Loading, Section, Table, useAction, useLoad } from '../ui.js';

export function OrganizationsTab(props: { api: Api; environment: PlatformEnvironment; organizationId: string | undefined; projectId: string }) {
  return props.organizationId ? (
    <OrganizationDetail {...props} organizationId={props.organizationId} />
  ) : (
    <>
      <OrganizationList {...props} />
      <Roles api={props.api} environment={props.environment} />
    </>
  );
}

function OrganizationList({ api, environment, projectId }: { api: Api; environment: PlatformEnvironment; projectId: string }) {
  const orgs = useLoad(() => api<OrganizationPage>('GET', `/v1/platform/environments/${environment.id}/organizations?limit=100`), [environment.id]);
  return (
    <Section title="Organizations">
      <ErrorMessage error={orgs.error} />
      {!orgs.data && !orgs.error && <Loading what="organizations" />}
      {orgs.data && (
        <Table headings={['Name', 'Slug', 'Created']} empty={orgs.data.data.length === 0 && 'No organization yet.'}>
          {orgs.data.data.map((o) => (
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
    </Section>
  );
}

function OrganizationDetail({ api, environment, organizationId, projectId }: { api: Api; environment: PlatformEnvironment; organizationId: string; projectId: string }) {
  const base = `/v1/platform/environments/${environment.id}/organizations/${encodeURIComponent(organizationId)}`;
  const org = useLoad(() => api<Organization>('GET', base), [base]);
  const members = useLoad(() => api<MemberPage>('GET', `${base}/members?limit=100`), [base]);
  const roles = useLoad(() => api<RoleList>('GET', `/v1/platform/environments/${environment.id}/roles`), [environment.id]);
  const change = useAction();
  if (org.error) return <ErrorMessage error={org.error} />;
  if (!org.data) return <Loading what="the organization" />;
  return (
    <>
      <p className="breadcrumbs">
        <a href={href('projects', projectId, environment.type, 'organizations')}>Organizations</a> / {org.data.name}
      </p>
      <Section title={`Members of ${org.data.name}`}>
        <ErrorMessage error={members.error ?? change.error} />
        {members.data && (
          <Table headings={['Member', 'Role', 'Joined']} actions>
            {members.data.data.map((m) => (
              <tr key={m.userId}>
                <td>{m.email}</td>
                <td>
                  <select
                    aria-label={`Role of ${m.email}`}
                    value={m.role}
                    disabled={change.pending}
                    onChange={(e) =>
                      void change.run(async () => {
                        await api('PATCH', `${base}/members/${encodeURIComponent(m.userId)}`, { role: e.target.value });
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
                      await api('DELETE', `${base}/members/${encodeURIComponent(m.userId)}`);
                      members.reload();
                    }}
                  />
                </td>
              </tr>
            ))}
          </Table>
        )}
      </Section>
      <Invitations api={api} base={base} roles={roles.data?.data ?? []} onAccepted={members.reload} />
    </>
  );
}

function Invitations({ api, base, roles }: { api: Api; base: string; roles: Role[]; onAccepted: () => void }) {
  const invitations = useLoad(() => api<InvitationList>('GET', `${base}/invitations?status=pending`), [base]);
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
            await api<Invitation>('POST', `${base}/invitations`, { email, role });
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
      <ErrorMessage error={create.error ?? invitations.error} />
      {invitations.data && (
        <Table headings={['Email', 'Role', 'Expires']} actions empty={invitations.data.data.length === 0 && 'No pending invitation.'}>
          {invitations.data.data.map((i) => (
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
                    await api('POST', `${base}/invitations/${encodeURIComponent(i.id)}/revoke`);
                    invitations.reload();
                  }}
                />
              </td>
            </tr>
          ))}
        </Table>
      )}
    </Section>
  );
}

function Roles({ api, environment }: { api: Api; environment: PlatformEnvironment }) {
  const base = `/v1/platform/environments/${environment.id}/roles`;
  const roles = useLoad(() => api<RoleList>('GET', base), [base]);
  const [key, setKey] = useState('');
  const [name, setName] = useState('');
  const [permissions, setPermissions] = useState('');
  const create = useAction();
  return (
    <Section title="Roles and permissions">
      <ErrorMessage error={roles.error} />
      {roles.data && (
        <Table headings={['Role', 'Key', 'Permissions']} actions>
          {roles.data.data.map((r) => (
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
                      await api('DELETE', `${base}/${encodeURIComponent(r.key)}`);
                      roles.reload();
                    }}
                  />
                )}
              </td>
            </tr>
          ))}
        </Table>
      )}
      <form
        className="row wrap"
        onSubmit={(e) => {
          e.preventDefault();
          void create.run(async () => {
            await api<Role>('POST', base, { key, name, permissions: permissions.split(',').map((p) => p.trim()).filter(Boolean) });
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
