import { useRef, useState } from 'react';
import type { Project } from '@gatehouse/contract';
import type { Platform } from '../platform.js';
import { navigate } from '../router.js';
import { ConfirmButton, ErrorMessage, Section, useAction } from '../ui.js';

/** The project's name, its logo (emails and hosted pages), and its deletion. */
export function ProjectTab({ platform, project, onChanged }: { platform: Platform; project: Project; onChanged: () => void }) {
  const [name, setName] = useState(project.name);
  const rename = useAction();
  const upload = useAction();
  const file = useRef<HTMLInputElement>(null);
  return (
    <>
      <Section title="Logo">
        <p className="muted">Shown in emails and on the hosted pages. PNG, JPEG or WebP, at most 1 MB and 4096×4096.</p>
        {project.logoUrl ? <img src={project.logoUrl} alt={`${project.name} logo`} className="logo" /> : <p className="muted">No logo.</p>}
        <form
          className="row wrap"
          onSubmit={(e) => {
            e.preventDefault();
            const chosen = file.current?.files?.[0];
            if (!chosen) return upload.setError('Choose an image file first.');
            void upload.run(async () => {
              await platform.projects.uploadLogo(project.id, chosen);
              if (file.current) file.current.value = '';
              onChanged();
            });
          }}
        >
          <label>
            Image
            <input ref={file} type="file" accept="image/png,image/jpeg,image/webp" name="logo" />
          </label>
          <button type="submit" className="primary" disabled={upload.pending}>
            Upload logo
          </button>
          {project.logoUrl && (
            <ConfirmButton
              label="Remove logo"
              title="Remove the logo"
              message={<p>Emails and hosted pages show the project's name only.</p>}
              onConfirm={async () => {
                await platform.projects.removeLogo(project.id);
                onChanged();
              }}
            />
          )}
        </form>
        <ErrorMessage error={upload.error} />
      </Section>
      <Section title="Project">
        <form
          className="row wrap"
          onSubmit={(e) => {
            e.preventDefault();
            void rename.run(async () => {
              await platform.projects.rename(project.id, name);
              onChanged();
            });
          }}
        >
          <label>
            Name
            <input required maxLength={200} value={name} onChange={(e) => setName(e.target.value)} />
          </label>
          <button type="submit" disabled={rename.pending}>
            Rename
          </button>
        </form>
        <ErrorMessage error={rename.error} />
      </Section>
      <Section title="Danger zone">
        <ConfirmButton
          label="Delete project"
          title={`Delete ${project.name}`}
          message={
            <p>
              Both environments of <strong>{project.name}</strong> and all their data (users, sessions, organizations, keys, emails, usage) are
              deleted at once and for good.
            </p>
          }
          confirmLabel="Delete project for good"
          onConfirm={async () => {
            await platform.projects.remove(project.id);
            navigate('projects');
          }}
        />
      </Section>
    </>
  );
}
