import { useEffect, useRef, useState } from 'react';
import type { EnvironmentInfo, UserIdentity } from '@gatehouse/js';
import { useGatehouse } from '../context.js';
import { FORM, FormError, useForm } from './primitives.js';

export type Connection = EnvironmentInfo['ssoConnections'][number];

const PROVIDER_NAMES: Record<string, string> = {
  google: 'Google',
  github: 'GitHub',
  microsoft: 'Microsoft',
  apple: 'Apple',
  gitlab: 'GitLab',
  discord: 'Discord',
  linkedin: 'LinkedIn',
  oidc: 'OpenID Connect',
  oauth2: 'OAuth 2.0',
  saml: 'SAML',
};

/** The connection's name, else the provider's. */
export function providerName(provider: string, connection?: Connection): string {
  return connection?.name ?? PROVIDER_NAMES[provider] ?? provider;
}

/**
 * A neutral icon: the provider's initial in a circle. Providers' logos are their trademarks, with
 * rules of their own for how they may be drawn; an application that wants them styles the buttons
 * (`data-gh-provider`).
 */
export function ProviderIcon(props: { provider: string; name: string }) {
  const letter = (props.name.trim()[0] ?? '?').toUpperCase();
  return (
    <svg className="gh-provider-icon" width="18" height="18" viewBox="0 0 18 18" aria-hidden="true" focusable="false" data-gh-provider-icon={props.provider}>
      <circle cx="9" cy="9" r="8" fill="none" stroke="currentColor" strokeWidth="1.5" />
      <text x="9" y="12.5" textAnchor="middle" fontSize="9" fontWeight="700" fill="currentColor" fontFamily="system-ui, sans-serif">{letter}</text>
    </svg>
  );
}

/** One "Continue with {name}" button per connection, then an "or" before the other methods. */
export function SsoButtons(props: { connections: Connection[]; busy: boolean; onChoose: (connectionId: string) => void; divider: boolean }) {
  if (props.connections.length === 0) return null;
  return (
    <>
      <div className="gh-alternatives" role="group" aria-label="Single sign-on">
        {props.connections.map((c) => (
          <button key={c.id} type="button" className="gh-button gh-secondary gh-provider" data-gh-sso={c.id} data-gh-provider={c.provider} onClick={() => props.onChoose(c.id)} disabled={props.busy}>
            <ProviderIcon provider={c.provider} name={c.name} />
            <span>Continue with {c.name}</span>
          </button>
        ))}
      </div>
      {props.divider ? <div className="gh-divider">or</div> : null}
    </>
  );
}

function thisPage(): string {
  return typeof location === 'undefined' ? '' : location.href.split('#')[0]!;
}

/**
 * UserProfile's "Connected accounts": the providers linked to the user, with Unlink, and a
 * Connect button for each social connection not linked yet. Ends a link's round trip.
 */
export function ConnectedAccounts(props: { connections: Connection[]; redirectUrl?: string | undefined }) {
  const client = useGatehouse();
  const [identities, setIdentities] = useState<UserIdentity[] | null>(null);
  const [linked, setLinked] = useState(false);
  const form = useForm([]);
  const handled = useRef(false);
  useEffect(() => {
    void form.submit(async () => {
      if (!handled.current && typeof location !== 'undefined') {
        handled.current = true;
        const url = new URL(location.href);
        // A link's return: its token completes it; a refusal (e.g. account_exists) shows its reason here.
        if (url.searchParams.has('__gh_link') && (url.searchParams.has('token') || url.searchParams.has('error'))) {
          try {
            await client.handleRedirect();
            setLinked(true);
          } finally {
            setIdentities(await client.user.identities.list());
          }
          return;
        }
      }
      setIdentities(await client.user.identities.list());
    })();
  }, [client]); // eslint-disable-line react-hooks/exhaustive-deps
  const byId = new Map(props.connections.map((c) => [c.id, c]));
  const linkedIds = new Set((identities ?? []).map((i) => i.connectionId));
  const available = props.connections.filter((c) => c.domains.length === 0 && !linkedIds.has(c.id));
  return (
    <section className="gh-section" aria-labelledby="gh-connected-title" data-gh-section="connected-accounts">
      <h2 className="gh-section-title" id="gh-connected-title">Connected accounts</h2>
      <p className="gh-success" role="status">{linked ? 'Account connected.' : ''}</p>
      <FormError error={form.errors[FORM]} />
      <ul className="gh-list">
        {identities !== null && identities.length === 0 ? <li className="gh-muted">No connected accounts.</li> : null}
        {(identities ?? []).map((identity) => {
          const name = providerName(identity.provider, byId.get(identity.connectionId));
          return (
            <li key={identity.id} data-gh-identity={identity.id}>
              <ProviderIcon provider={identity.provider} name={name} />
              <div style={{ flex: 1, minWidth: 0 }}>
                <div className="gh-name gh-ellipsis">{name}</div>
                <div className="gh-muted gh-ellipsis">{identity.email ?? 'No email shared'}</div>
              </div>
              <button type="button" className="gh-button gh-danger gh-small" aria-label={`Disconnect ${name}`} disabled={form.busy}
                onClick={() => void form.submit(async () => {
                  setLinked(false);
                  await client.user.identities.unlink(identity.id);
                  setIdentities(await client.user.identities.list());
                })()}>
                Disconnect
              </button>
            </li>
          );
        })}
      </ul>
      {available.length > 0 ? (
        <div className="gh-alternatives" role="group" aria-label="Connect an account">
          {available.map((c) => (
            <button key={c.id} type="button" className="gh-button gh-secondary gh-provider" data-gh-link={c.id} data-gh-provider={c.provider} disabled={form.busy}
              onClick={() => void form.submit(() => client.user.identities.link({ connectionId: c.id, redirectUrl: props.redirectUrl ?? thisPage() }))()}>
              <ProviderIcon provider={c.provider} name={c.name} />
              <span>Connect {c.name}</span>
            </button>
          ))}
        </div>
      ) : null}
    </section>
  );
}
