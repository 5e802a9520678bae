import type { Project } from '@gatehouse/contract';
import type { Api } from '../api.js';
import { href } from '../router.js';
import { ErrorMessage, Loading, useLoad } from '../ui.js';
import { KeysTab } from './keys.js';
import { SettingsTab } from './settings.js';
import { UsersTab } from './users.js';
import { EmailsTab } from './emails.js';
import { UsageTab } from './usage.js';
import { OrganizationsTab } from './organizations.js';
import { ProjectTab } from './branding.js';
import { WebhooksTab } from './webhooks.js';
import { SsoTab } from './sso.js';

const TABS = [
  ['keys', 'Keys'],
  ['settings', 'Settings'],
  ['users', 'Users'],
  ['organizations', 'Organizations'],
  ['emails', 'Emails'],
  ['usage', 'Usage'],
  ['webhooks', 'Webhooks'],
  ['sso', 'SSO'],
  ['project', 'Branding & project'],
] as const;

export function ProjectPage(props: { api: Api; projectId: string; environmentType: 'development' | 'production'; tab: string; rest: string[] }) {
  const { api, projectId, environmentType, tab } = props;
  const project = useLoad(() => api<Project>('GET', `/v1/platform/projects/${encodeURIComponent(projectId)}`), [projectId]);
  if (project.error) return <ErrorMessage error={project.error} />;
  if (!project.data) return <Loading what="the project" />;
  const environment = project.data.environments.find((e) => e.type === environmentType)!;
  const tabLabel = (key: string, label: string) => (key === 'emails' ? (environmentType === 'development' ? 'Inbox' : 'Outbox') : label);

  return (
    <>
      <p className="breadcrumbs">
        <a href={href('projects')}>Projects</a> / {project.data.name}
      </p>
      <div className="row between wrap">
        <h1>{project.data.name}</h1>
        <div className="segmented" role="group" aria-label="Environment">
          {(['development', 'production'] as const).map((type) => (
            <a key={type} href={href('projects', projectId, type, tab)} aria-current={type === environmentType ? 'true' : undefined}>
              {type === 'development' ? 'Development' : 'Production'}
            </a>
          ))}
        </div>
      </div>
      <nav className="tabs" aria-label="Project">
        {TABS.map(([key, label]) => (
          <a key={key} href={href('projects', projectId, environmentType, key)} aria-current={key === tab ? 'page' : undefined}>
            {tabLabel(key, label)}
          </a>
        ))}
      </nav>
      {tab === 'keys' && <KeysTab api={api} environment={environment} />}
      {tab === 'settings' && <SettingsTab api={api} environment={environment} onSaved={project.reload} />}
      {tab === 'users' && <UsersTab api={api} environment={environment} userId={props.rest[0]} projectId={projectId} />}
      {tab === 'organizations' && <OrganizationsTab api={api} environment={environment} organizationId={props.rest[0]} projectId={projectId} />}
      {tab === 'emails' && <EmailsTab api={api} environment={environment} />}
      {tab === 'usage' && <UsageTab api={api} project={project.data} />}
      {tab === 'webhooks' && <WebhooksTab api={api} environment={environment} endpointId={props.rest[0]} projectId={projectId} />}
      {tab === 'sso' && <SsoTab api={api} environment={environment} />}
      {tab === 'project' && <ProjectTab api={api} project={project.data} onChanged={project.reload} />}
    </>
  );
}
