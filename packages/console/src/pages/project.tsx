import type { Project } from '@gatehouse/contract';
import type { Platform } from '../platform.js';
import { href } from '../router.js';
import { Loaded, useLoad } from '../ui.js';
import { KeysTab } from './keys.js';
import { SettingsTab } from './settings.js';
import { UsersTab } from './users.js';
import { EmailsTab } from './emails.js';
import { UsageTab } from './usage.js';
import { OrganizationsTab } from './organizations.js';
import { ProjectTab } from './branding.js';
import { WebhooksTab } from './webhooks.js';
import { SsoTab } from './sso.js';
import { MachinesTab } from './machines.js';

const TABS = [
  ['keys', 'Keys'],
  ['settings', 'Settings'],
  ['users', 'Users'],
  ['organizations', 'Organizations'],
  ['emails', 'Emails'],
  ['usage', 'Usage'],
  ['webhooks', 'Webhooks'],
  ['sso', 'SSO'],
  ['machines', 'Machines'],
  ['project', 'Branding & project'],
] as const;

type ProjectProps = { platform: Platform; projectId: string; environmentType: 'development' | 'production'; tab: string; rest: string[] };

export function ProjectPage(props: ProjectProps) {
  const project = useLoad(() => props.platform.projects.get(props.projectId), [props.projectId]);
  return (
    <Loaded state={project} what="the project">
      {(loaded) => <ProjectTabs {...props} project={loaded} reload={project.reload} />}
    </Loaded>
  );
}

function ProjectTabs(props: ProjectProps & { project: Project; reload: () => void }) {
  const { platform, projectId, environmentType, tab, project } = props;
  const environment = project.environments.find((e) => e.type === environmentType)!;
  const tabLabel = (key: string, label: string) => (key === 'emails' ? (environmentType === 'development' ? 'Inbox' : 'Outbox') : label);

  return (
    <>
      <p className="breadcrumbs">
        <a href={href('projects')}>Projects</a> / {project.name}
      </p>
      <div className="row between wrap">
        <h1>{project.name}</h1>
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
      {tab === 'keys' && <KeysTab platform={platform} environment={environment} />}
      {tab === 'settings' && <SettingsTab platform={platform} environment={environment} onSaved={props.reload} />}
      {tab === 'users' && <UsersTab platform={platform} environment={environment} userId={props.rest[0]} projectId={projectId} />}
      {tab === 'organizations' && <OrganizationsTab platform={platform} environment={environment} organizationId={props.rest[0]} projectId={projectId} />}
      {tab === 'emails' && <EmailsTab platform={platform} environment={environment} />}
      {tab === 'usage' && <UsageTab platform={platform} project={project} />}
      {tab === 'webhooks' && <WebhooksTab platform={platform} environment={environment} endpointId={props.rest[0]} projectId={projectId} />}
      {tab === 'sso' && <SsoTab platform={platform} environment={environment} />}
      {tab === 'machines' && <MachinesTab platform={platform} environment={environment} />}
      {tab === 'project' && <ProjectTab platform={platform} project={project} onChanged={props.reload} />}
    </>
  );
}
