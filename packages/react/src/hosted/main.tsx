// The hosted pages (/hosted/{environmentId}/…): the same components, served by Gatehouse itself.
import { StrictMode, useEffect, useState } from 'react';
import { createRoot } from 'react-dom/client';
import { createGatehouse, type Gatehouse } from '@gatehouse/js';
import { GatehouseProvider, OrganizationProfile, OrganizationSwitcher, SignIn, SignUp, useAuth, UserButton, UserProfile } from '../index.js';
import { InvitationAcceptance, invitationToken } from '../ui/invitation.js';
import { Header, Root } from '../ui/primitives.js';
import { SecondFactorStep, type SecondFactorAsk } from '../ui/second-factor.js';

interface Config {
  page: 'sign-in' | 'sign-up' | 'user' | 'organization' | 'accept-invitation' | 'actor';
  environmentId: string;
  publishableKey: string;
  baseUrl: string;
  redirectUrl: string | null;
  redirectError: string | null;
  applicationName: string;
  logoUrl: string | null;
}

const config = JSON.parse(document.getElementById('gatehouse-config')!.textContent!) as Config;
const client = createGatehouse({ publishableKey: config.publishableKey, baseUrl: config.baseUrl });
const dark = matchMedia('(prefers-color-scheme: dark)').matches;
document.documentElement.style.background = dark ? '#020617' : '#f1f5f9';
document.body.style.margin = '0';

function pageUrl(page: Config['page']): string {
  const url = new URL(`/hosted/${encodeURIComponent(config.environmentId)}/${page}`, location.origin);
  if (config.redirectUrl) url.searchParams.set('redirect_url', config.redirectUrl);
  return url.pathname + url.search;
}

/** Signed in: to the application with a one-time token, or to the hosted account page. */
async function leave(gh: Gatehouse): Promise<void> {
  if (!config.redirectUrl) return location.assign(pageUrl('user').split('?')[0]!);
  const response = await gh.fetch(`${config.baseUrl}/v1/me/handoff`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ redirectUrl: config.redirectUrl }),
  });
  const body = (await response.json()) as { redirectUrl?: string; error?: { message: string } };
  if (!response.ok || !body.redirectUrl) throw new Error(body.error?.message ?? 'The handoff failed. Sign in again.');
  location.replace(body.redirectUrl);
}

function Refused({ message, hint = "Ask the application's developer to add its address to the allowed origins of this environment." }: { message: string; hint?: string }) {
  return (
    <Root>
      <div className="gh-card" data-gh-component="hosted-refused">
        <Header title="This link cannot be used" logoUrl={config.logoUrl ?? undefined} />
        <p className="gh-form-error" role="alert">{message}</p>
        <p className="gh-muted" style={{ marginTop: 16 }}>{hint}</p>
      </div>
    </Root>
  );
}

/**
 * The default target of invitation emails. Accepting signs in the invitee (whoever was signed in
 * here before); then the application (redirect_url) or the organization just joined.
 */
function AcceptInvitationPage() {
  const [token] = useState(() => invitationToken(true));
  const [error, setError] = useState<string | null>(null);
  // The account waits for a second factor before the handoff (mfa).
  const [second, setSecond] = useState<SecondFactorAsk | null>(null);
  // The organizations of whoever was signed in here before: the one that is new is the one joined.
  const [before] = useState(() => new Set(client.state.organizations.map((o) => o.id)));
  const onDone = () =>
    void (async () => {
      if (config.redirectUrl) return leave(client);
      const joined = client.state.organizations.filter((o) => !before.has(o.id));
      // The one organization of a newcomer: open it. Otherwise the account page lists them all.
      if (joined.length === 1) {
        await client.setActiveOrganization(joined[0]!.id);
        return location.assign(pageUrl('organization').split('?')[0]!);
      }
      location.assign(pageUrl('user').split('?')[0]!);
    })().catch((e: Error) => setError(e.message));
  if (error) return <Refused message={error} />;
  return (
    <Root>
      <div className="gh-card" data-gh-component="hosted-accept-invitation">
        <Header title="Accept your invitation" subtitle={`to ${config.applicationName}`} logoUrl={config.logoUrl ?? undefined} />
        {second ? (
          <SecondFactorStep ask={second} onDone={onDone} />
        ) : token ? (
          <InvitationAcceptance token={token} onDone={onDone} onSecondFactor={setSecond} />
        ) : (
          <p className="gh-form-error" role="alert">This invitation link has no token. Open the link from the invitation email as it is.</p>
        )}
      </div>
    </Root>
  );
}

/**
 * The url of an actor token (impersonation): redeems it, whoever was signed in here before, then
 * continues like the sign-in page (redirect_url with a handoff, or the account page).
 */
function ActorPage() {
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    const url = new URL(location.href);
    const token = url.searchParams.get('token');
    // Off the address bar and the history before anything else: the token is a credential.
    url.searchParams.delete('token');
    history.replaceState(history.state, '', url.pathname + url.search);
    if (!token) return setError('This link has no actor token. Open the url that POST /v1/actor-tokens answered as it is.');
    void (async () => {
      await client.signIn.actorToken({ token });
      await leave(client);
    })().catch((e: Error) => setError(e.message));
  }, []);
  if (error) return <Refused message={error} hint="Actor tokens work once and expire: ask for a new one." />;
  return (
    <Root>
      <div className="gh-card" data-gh-component="hosted-actor">
        <p className="gh-notice" role="status">Signing in as the user…</p>
      </div>
    </Root>
  );
}

function Page() {
  const auth = useAuth();
  const [error, setError] = useState<string | null>(null);
  const signingPage = config.page === 'sign-in' || config.page === 'sign-up';
  useEffect(() => {
    if (!auth.isLoaded) return;
    if (auth.isSignedIn && signingPage) void leave(client).catch((e: Error) => setError(e.message));
    if (!auth.isSignedIn && !signingPage && config.page !== 'accept-invitation' && config.page !== 'actor') location.replace(pageUrl('sign-in'));
  }, [auth.isLoaded, auth.isSignedIn]);
  if (config.redirectError) return <Refused message={config.redirectError} />;
  if (error) return <Refused message={error} />;
  if (!auth.isLoaded) return null;
  if (config.page === 'accept-invitation') return <AcceptInvitationPage />;
  if (config.page === 'actor') return <ActorPage />;
  if (signingPage) {
    if (auth.isSignedIn) return <Root><div className="gh-card"><p className="gh-notice" role="status">Signing you in…</p></div></Root>;
    return config.page === 'sign-in' ? <SignIn signUpUrl={pageUrl('sign-up')} /> : <SignUp signInUrl={pageUrl('sign-in')} />;
  }
  if (!auth.isSignedIn) return null;
  return (
    <div style={{ display: 'flex', flexDirection: 'column', gap: 24, alignItems: 'center', width: '100%', maxWidth: 760 }}>
      <div style={{ display: 'flex', justifyContent: 'space-between', width: '100%' }}>
        <OrganizationSwitcher organizationProfileUrl={pageUrl('organization')} />
        <UserButton userProfileUrl={pageUrl('user')} afterSignOutUrl={pageUrl('sign-in')} />
      </div>
      {config.page === 'user' ? <UserProfile /> : <OrganizationProfile />}
    </div>
  );
}

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <GatehouseProvider client={client} appearance={{ theme: 'auto', applicationName: config.applicationName, ...(config.logoUrl ? { logoUrl: config.logoUrl } : {}) }}>
      <main style={{ minHeight: '100vh', display: 'flex', justifyContent: 'center', alignItems: 'flex-start', padding: '64px 16px', boxSizing: 'border-box' }}>
        <Page />
      </main>
    </GatehouseProvider>
  </StrictMode>,
);
