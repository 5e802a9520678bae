import { useState } from 'react';
import type { CreateSsoConnectionBody, PlatformEnvironment } from '@gatehouse/contract';
import { formatTime } from '../api.js';
import type { Platform } from '../platform.js';
import { ConfirmButton, ErrorMessage, Loaded, Section, Table, useAction, useLoad } from '../ui.js';

type Kind = 'oidc' | 'google' | 'github' | 'microsoft' | 'apple' | 'gitlab' | 'discord' | 'linkedin' | 'saml';

export function SsoTab({ platform, environment }: { platform: Platform; environment: PlatformEnvironment }) {
  const connections = useLoad(() => platform.sso.list(environment.id), [environment.id]);
  const [kind, setKind] = useState<Kind>('oidc');
  const [name, setName] = useState('');
  const [domains, setDomains] = useState('');
  const [issuer, setIssuer] = useState('');
  const [clientId, setClientId] = useState('');
  const [clientSecret, setClientSecret] = useState('');
  const [metadata, setMetadata] = useState('');
  const [apple, setApple] = useState({ teamId: '', keyId: '', privateKey: '' });
  const create = useAction();

  const body = (): CreateSsoConnectionBody => {
    const common = { name, domains: domains.split(',').map((d) => d.trim()).filter(Boolean) };
    if (kind === 'saml') return { type: 'saml', ...common, idpMetadataXml: metadata };
    if (kind === 'oidc') return { type: 'oidc', ...common, issuer, clientId, clientSecret };
    // Apple's client secret is a JWT Gatehouse signs with the key from the developer account.
    if (kind === 'apple') return { type: 'oidc', preset: kind, ...common, clientId, ...apple };
    return { type: 'oidc', preset: kind, ...common, clientId, clientSecret };
  };

  return (
    <>
      {!environment.authMethods.sso && (
        <p className="callout">Single sign-on is off for this environment: turn it on in Settings for these connections to be used.</p>
      )}
      <Section title="Add a connection">
        <form
          className="stack"
          onSubmit={(e) => {
            e.preventDefault();
            void create.run(async () => {
              await platform.sso.create(environment.id, body());
              setName('');
              setDomains('');
              setClientSecret('');
              setMetadata('');
              setApple({ teamId: '', keyId: '', privateKey: '' });
              connections.reload();
            });
          }}
        >
          <div className="row wrap">
            <label>
              Provider
              <select value={kind} onChange={(e) => setKind(e.target.value as Kind)}>
                <option value="oidc">OpenID Connect</option>
                <option value="google">Google</option>
                <option value="github">GitHub</option>
                <option value="microsoft">Microsoft</option>
                <option value="apple">Apple</option>
                <option value="gitlab">GitLab</option>
                <option value="discord">Discord</option>
                <option value="linkedin">LinkedIn</option>
                <option value="saml">SAML</option>
              </select>
            </label>
            <label>
              Name
              <input required value={name} onChange={(e) => setName(e.target.value)} />
            </label>
            <label>
              Email domains (comma-separated; none for a social sign-in button)
              <input value={domains} placeholder="example.com" onChange={(e) => setDomains(e.target.value)} />
            </label>
          </div>
          {kind === 'saml' ? (
            <label>
              IdP metadata XML
              <textarea rows={5} required value={metadata} onChange={(e) => setMetadata(e.target.value)} />
            </label>
          ) : (
            <div className="row wrap">
              {kind === 'oidc' && (
                <label>
                  Issuer
                  <input type="url" required value={issuer} onChange={(e) => setIssuer(e.target.value)} />
                </label>
              )}
              <label>
                Client id
                <input required value={clientId} onChange={(e) => setClientId(e.target.value)} />
              </label>
              {kind === 'apple' ? (
                <>
                  <label>
                    Team ID
                    <input required value={apple.teamId} onChange={(e) => setApple({ ...apple, teamId: e.target.value })} />
                  </label>
                  <label>
                    Key ID
                    <input required value={apple.keyId} onChange={(e) => setApple({ ...apple, keyId: e.target.value })} />
                  </label>
                  <label>
                    Private key (.p8)
                    <textarea rows={4} required value={apple.privateKey} autoComplete="off" onChange={(e) => setApple({ ...apple, privateKey: e.target.value })} />
                  </label>
                </>
              ) : (
                <label>
                  Client secret
                  <input type="password" required value={clientSecret} autoComplete="off" onChange={(e) => setClientSecret(e.target.value)} />
                </label>
              )}
            </div>
          )}
          <ErrorMessage error={create.error} />
          <div>
            <button type="submit" className="primary" disabled={create.pending}>
              Add connection
            </button>
          </div>
        </form>
      </Section>
      <Section title="Connections">
        <Loaded state={connections} what="connections">
          {(list) => (
            <Table
              headings={['Name', 'Type', 'Domains', 'Register at the IdP', 'Created']}
              actions
              empty={list.data.length === 0 && 'No connection yet.'}
            >
              {list.data.map((c) => (
                <tr key={c.id}>
                  <td>{c.name}</td>
                  <td>{c.type === 'oidc' ? (c.preset ?? 'OIDC') : c.type === 'oauth2' ? 'OAuth 2.0' : 'SAML'}</td>
                  <td>{c.domains.join(', ') || 'Social (button)'}</td>
                  <td>
                    <code>{c.redirectUri ?? c.acsUrl ?? '—'}</code>
                  </td>
                  <td>{formatTime(c.createdAt)}</td>
                  <td>
                    <ConfirmButton
                      label="Delete"
                      title={`Delete ${c.name}`}
                      message={<p>Users of {c.domains.join(', ')} can no longer sign in through {c.name}.</p>}
                      confirmLabel="Delete connection"
                      onConfirm={async () => {
                        await platform.sso.remove(environment.id, c.id);
                        connections.reload();
                      }}
                    />
                  </td>
                </tr>
              ))}
            </Table>
          )}
        </Loaded>
      </Section>
    </>
  );
}
