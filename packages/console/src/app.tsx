import { useMemo } from 'react';
import type { Gatehouse } from '@gatehouse/js';
import { GatehouseProvider, SignedIn, SignedOut, SignIn, UserButton } from '@gatehouse/react';
import { createApi } from './api.js';
import { createPlatform, type Platform } from './platform.js';
import { href, useRoute } from './router.js';
import { ProjectsPage } from './pages/projects.js';
import { ProjectPage } from './pages/project.js';
import { OperatorsPage } from './pages/operators.js';
import { AuditPage } from './pages/audit.js';

export function App({ client }: { client: Gatehouse }) {
  const platform = useMemo(() => createPlatform(createApi((path, init) => client.fetch(path, init))), [client]);
  return (
    <GatehouseProvider client={client} appearance={{ applicationName: 'the Gatehouse console' }}>
      <SignedOut>
        <main className="center">
          <SignIn />
        </main>
      </SignedOut>
      <SignedIn>
        <Shell platform={platform} />
      </SignedIn>
    </GatehouseProvider>
  );
}

function Shell({ platform }: { platform: Platform }) {
  const route = useRoute();
  const section = route[0] ?? 'projects';
  const link = (to: string, label: string) => (
    <a href={href(to)} aria-current={section === to ? 'page' : undefined}>
      {label}
    </a>
  );
  return (
    <div className="shell">
      <header className="topbar">
        <a href={href('projects')} className="brand">
          Gatehouse console
        </a>
        <nav aria-label="Console">
          {link('projects', 'Projects')}
          {link('operators', 'Operators')}
          {link('audit', 'Audit log')}
        </nav>
        <UserButton />
      </header>
      <main className="content">
        {section === 'projects' && route[1] ? (
          <ProjectPage platform={platform} projectId={route[1]} environmentType={route[2] === 'production' ? 'production' : 'development'} tab={route[3] ?? 'keys'} rest={route.slice(4)} />
        ) : section === 'operators' ? (
          <OperatorsPage platform={platform} />
        ) : section === 'audit' ? (
          <AuditPage platform={platform} />
        ) : (
          <ProjectsPage platform={platform} />
        )}
      </main>
    </div>
  );
}
