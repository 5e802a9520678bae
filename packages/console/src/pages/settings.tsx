import { useEffect, useMemo, useState } from 'react';
import { createGatehouse } from '@gatehouse/js';
import { GatehouseProvider, SignIn } from '@gatehouse/react';
import type { PlatformEnvironment } from '@gatehouse/contract';
import type { Platform } from '../platform.js';
import { ErrorMessage, Section, useAction, useLoad } from '../ui.js';

type Methods = PlatformEnvironment['authMethods'];
const METHODS: Array<[keyof Methods, string]> = [
  ['password', 'Password'],
  ['magicLink', 'Magic link'],
  ['emailCode', 'Email code'],
  ['sso', 'Single sign-on (SSO)'],
  ['passkey', 'Passkeys'],
];

/** Every setting of PATCH /v1/platform/environments/{id}, and the SignIn its methods make. */
export function SettingsTab({ platform, environment, onSaved }: { platform: Platform; environment: PlatformEnvironment; onSaved: () => void }) {
  const [current, setCurrent] = useState(environment);
  const [methods, setMethods] = useState<Methods>(environment.authMethods);
  const [signUp, setSignUp] = useState(environment.signUp);
  const [domain, setDomain] = useState(environment.domain ?? '');
  const [origins, setOrigins] = useState(environment.callbackOrigins.join('\n'));
  const [rateLimit, setRateLimit] = useState(environment.rateLimitPerMinute === null ? '' : String(environment.rateLimitPerMinute));
  const [algorithm, setAlgorithm] = useState(environment.tokenAlgorithm);
  const [ttl, setTtl] = useState(String(environment.accessTokenTtlSeconds));
  const [lifetime, setLifetime] = useState(String(environment.sessionLifetimeSeconds));
  const [inactivity, setInactivity] = useState(String(environment.sessionInactivitySeconds));
  const [verification, setVerification] = useState(environment.emailVerification);
  const [orgs, setOrgs] = useState(environment.usersCanCreateOrganizations);
  const [saved, setSaved] = useState(0);
  const { pending, error, run } = useAction();
  // This node's deployment warnings (a proxy TRUST_PROXY does not name): they affect every environment.
  const instance = useLoad(() => platform.instance(), [platform]);

  const save = (event: React.FormEvent) => {
    event.preventDefault();
    void run(async () => {
      const updated = await platform.environments.update(environment.id, {
        authMethods: methods,
        signUp,
        domain: domain.trim() === '' ? null : domain.trim(),
        callbackOrigins: origins.split('\n').map((o) => o.trim()).filter(Boolean),
        rateLimitPerMinute: rateLimit.trim() === '' ? null : Number(rateLimit),
        tokenAlgorithm: algorithm,
        accessTokenTtlSeconds: Number(ttl),
        sessionLifetimeSeconds: Number(lifetime),
        sessionInactivitySeconds: Number(inactivity),
        emailVerification: verification,
        usersCanCreateOrganizations: orgs,
      });
      setCurrent(updated);
      setSaved((n) => n + 1);
      onSaved();
    });
  };

  return (
    <div className="split">
      <Section title={`Settings of ${environment.type}`}>
        {instance.data?.proxyWarning && (
          <p className="warning" role="note" aria-label="Proxy warning">
            <strong>Client addresses:</strong> {instance.data.proxyWarning.message}
          </p>
        )}
        <form onSubmit={save} className="stack">
          <fieldset>
            <legend>Sign-in methods</legend>
            {METHODS.map(([key, label]) => (
              <label key={key} className="check">
                <input type="checkbox" checked={methods[key]} onChange={(e) => setMethods({ ...methods, [key]: e.target.checked })} name={key} />
                {label}
              </label>
            ))}
          </fieldset>
          <label className="check">
            <input type="checkbox" checked={signUp} onChange={(e) => setSignUp(e.target.checked)} name="signUp" />
            Anyone may sign up
          </label>
          <label>
            Sign-up email verification
            <select value={verification} onChange={(e) => setVerification(e.target.value as typeof verification)}>
              <option value="required">Required (an emailed code before the account exists)</option>
              <option value="off">Off</option>
            </select>
          </label>
          <label className="check">
            <input type="checkbox" checked={orgs} onChange={(e) => setOrgs(e.target.checked)} />
            Users may create organizations
          </label>
          <label>
            Domain (its https origins and subdomains may use the publishable key)
            <input value={domain} placeholder="example.com" onChange={(e) => setDomain(e.target.value)} name="domain" />
          </label>
          <label>
            Callback origins (one per line)
            <textarea rows={3} value={origins} placeholder="https://app.example.com" onChange={(e) => setOrigins(e.target.value)} name="callbackOrigins" />
          </label>
          <div className="row wrap">
            <label>
              Rate limit (requests per minute; empty: default)
              <input inputMode="numeric" value={rateLimit} onChange={(e) => setRateLimit(e.target.value)} name="rateLimitPerMinute" />
            </label>
            <label>
              Token algorithm
              <select value={algorithm} onChange={(e) => setAlgorithm(e.target.value as typeof algorithm)}>
                <option>RS256</option>
                <option>ES256</option>
                <option>EdDSA</option>
              </select>
            </label>
            <label>
              Access token lifetime (s, 30–3600)
              <input inputMode="numeric" value={ttl} onChange={(e) => setTtl(e.target.value)} />
            </label>
            <label>
              Session lifetime (s)
              <input inputMode="numeric" value={lifetime} onChange={(e) => setLifetime(e.target.value)} />
            </label>
            <label>
              Inactivity timeout (s)
              <input inputMode="numeric" value={inactivity} onChange={(e) => setInactivity(e.target.value)} />
            </label>
          </div>
          <ErrorMessage error={error} />
          <div className="row">
            <button type="submit" className="primary" disabled={pending}>
              Save settings
            </button>
            {saved > 0 && !error && !pending && (
              <span role="status" className="muted">
                Saved.
              </span>
            )}
          </div>
        </form>
      </Section>
      <Section title="Sign-in preview">
        <p className="muted">What {'<SignIn />'} shows for this environment's saved settings.</p>
        <SignInPreview environment={current} version={saved} />
      </Section>
    </div>
  );
}

/** The real SignIn, with its own client of this environment (memory storage: it signs nobody in here). */
function SignInPreview({ environment, version }: { environment: PlatformEnvironment; version: number }) {
  const client = useMemo(
    () => createGatehouse({ publishableKey: environment.publishableKey, baseUrl: location.origin, storage: 'memory' }),
    // A new client after each save, so the preview reads the environment again.
    [environment.publishableKey, version], // eslint-disable-line react-hooks/exhaustive-deps
  );
  useEffect(() => () => client.destroy(), [client]);
  const originAllowed = environment.type === 'development' || environment.callbackOrigins.includes(location.origin);
  if (!originAllowed) {
    return (
      <p className="muted">
        The preview runs on this page, and this production environment's origin lock refuses it (add {location.origin} to its callback
        origins to preview here). Enabled methods: {METHODS.filter(([k]) => environment.authMethods[k]).map(([, l]) => l).join(', ') || 'none'}.
      </p>
    );
  }
  return (
    <div className="preview" inert>
      <GatehouseProvider key={version} client={client}>
        <SignIn />
      </GatehouseProvider>
    </div>
  );
}
