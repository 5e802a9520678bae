import { useState } from 'react';
import type { CreatedProject } from '@gatehouse/contract';
import { formatTime } from '../api.js';
import { PageControls, usePages } from '../paging.js';
import type { Platform } from '../platform.js';
import { href } from '../router.js';
import { Copyable, ErrorMessage, Loaded, Section, Table, useAction } from '../ui.js';

export function ProjectsPage({ platform }: { platform: Platform }) {
  const projects = usePages((cursor) => platform.projects.list({ limit: 50, cursor }), []);
  const [name, setName] = useState('');
  const [domain, setDomain] = useState('');
  const [created, setCreated] = useState<CreatedProject | null>(null);
  const { pending, error, run } = useAction();

  const create = (event: React.FormEvent) => {
    event.preventDefault();
    void run(async () => {
      const project = await platform.projects.create({ name, ...(domain ? { domain } : {}) });
      setCreated(project);
      setName('');
      setDomain('');
      projects.reload();
    });
  };

  return (
    <>
      <h1>Projects</h1>
      <Section title="Create a project">
        <form className="row wrap" onSubmit={create}>
          <label>
            Name
            <input required maxLength={200} value={name} onChange={(e) => setName(e.target.value)} name="name" />
          </label>
          <label>
            Domain (optional)
            <input placeholder="example.com" value={domain} onChange={(e) => setDomain(e.target.value)} name="domain" />
          </label>
          <button type="submit" className="primary" disabled={pending}>
            Create project
          </button>
        </form>
        <ErrorMessage error={error} />
        {created && (
          <div className="callout" role="status">
            <p>
              <strong>{created.name}</strong> was created with a development and a production environment. Their secret keys are shown
              <strong> only now</strong>: save them.
            </p>
            {created.environments.map((e) => (
              <div key={e.id}>
                <h3>{e.type}</h3>
                <Copyable label={`${e.type} publishable key`} value={e.publishableKey} />
                <Copyable label={`${e.type} secret key`} value={e.secretKey} />
              </div>
            ))}
            <a href={href('projects', created.id)}>Open {created.name}</a>
          </div>
        )}
      </Section>
      <Section title="All projects">
        <Loaded state={projects} what="projects" empty="No project yet.">
          {(page) => (
            <Table headings={['Name', 'Id', 'Domain', 'Created']}>
              {page.data.map((p) => (
                <tr key={p.id}>
                  <td>
                    <a href={href('projects', p.id)}>{p.name}</a>
                  </td>
                  <td>
                    <code>{p.id}</code>
                  </td>
                  <td>{p.environments[0]?.domain ?? '—'}</td>
                  <td>{formatTime(p.createdAt)}</td>
                </tr>
              ))}
            </Table>
          )}
        </Loaded>
        <PageControls pages={projects} />
      </Section>
    </>
  );
}
