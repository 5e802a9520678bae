import { StrictMode, useEffect, useState } from 'react';
import { createRoot } from 'react-dom/client';
import { GatehouseProvider, OrganizationSwitcher, Protect, SignedIn, SignedOut, SignIn, SignUp, useAuth, UserButton } from '@gatehouse/react';

interface Config {
  gatehouseUrl: string;
  publishableKey: string;
  environmentId: string;
}

/** Calls our own API with the session's access token. */
function useApi() {
  const { getToken } = useAuth();
  return async (path: string) => {
    const response = await fetch(path, { headers: { authorization: `Bearer ${await getToken()}` } });
    return { status: response.status, body: await response.json() };
  };
}

function Claims() {
  const api = useApi();
  const { orgId } = useAuth();
  const [me, setMe] = useState<Record<string, unknown> | null>(null);
  useEffect(() => {
    void api('/api/me').then((r) => setMe(r.body));
  }, [orgId]); // eslint-disable-line react-hooks/exhaustive-deps
  return (
    <section className="panel">
      <h2>Your token, as the API sees it</h2>
      <p>
        Organization role from the claims: <strong id="claims-role">{me ? String(me.orgRole ?? 'none (personal account)') : '…'}</strong>
      </p>
      <pre>{me ? JSON.stringify(me, null, 2) : 'loading…'}</pre>
    </section>
  );
}

function AdminReport() {
  const api = useApi();
  const [result, setResult] = useState<{ status: number; body: { report?: string; error?: { message: string } } } | null>(null);
  return (
    <section className="panel">
      <h2>Admin report</h2>
      <p>The API checks your <em>live</em> membership in Gatehouse on every request.</p>
      <button type="button" id="load-report" onClick={() => void api('/api/admin-report').then(setResult)}>Load the report</button>
      {result ? (
        <p id="report" data-status={result.status} className={result.status === 200 ? 'ok' : 'refused'}>
          {result.status === 200 ? result.body.report : `Refused (${result.status}): ${result.body.error?.message}`}
        </p>
      ) : null}
    </section>
  );
}

/** `#sign-up` shows the sign-up form, anything else the sign-in form: each links to the other. */
function useHash() {
  const [hash, setHash] = useState(location.hash);
  useEffect(() => {
    const changed = () => setHash(location.hash);
    addEventListener('hashchange', changed);
    return () => removeEventListener('hashchange', changed);
  }, []);
  return hash;
}

function App({ config }: { config: Config }) {
  const signingUp = useHash() === '#sign-up';
  const hosted = `${config.gatehouseUrl}/hosted/${config.environmentId}/sign-in?redirect_url=${encodeURIComponent(location.origin + '/')}`;
  return (
    <>
      <header className="bar">
        <strong>Acme</strong>
        <SignedIn>
          <div className="bar-right">
            <OrganizationSwitcher />
            <UserButton />
          </div>
        </SignedIn>
      </header>
      <main>
        <SignedOut>
          <div className="center">
            {signingUp ? <SignUp signInUrl="#sign-in" /> : <SignIn signUpUrl="#sign-up" />}
            <p className="muted">
              or use <a href={hosted} id="hosted-link">the sign-in page hosted by Gatehouse</a>
            </p>
          </div>
        </SignedOut>
        <SignedIn>
          <Claims />
          <Protect role="admin" fallback={null}>
            <p className="muted">Your token says you are an admin of this organization.</p>
          </Protect>
          <AdminReport />
        </SignedIn>
      </main>
    </>
  );
}

const style = document.createElement('style');
style.textContent = `body{margin:0;font:15px system-ui,sans-serif;background:#f1f5f9;color:#0f172a}
.bar{display:flex;justify-content:space-between;align-items:center;padding:12px 24px;background:#fff;border-bottom:1px solid #e2e8f0}
.bar-right{display:flex;gap:12px;align-items:center}main{max-width:760px;margin:32px auto;padding:0 16px}
.center{display:flex;flex-direction:column;align-items:center;gap:12px}.muted{color:#64748b}
.panel{background:#fff;border:1px solid #e2e8f0;border-radius:14px;padding:20px 24px;margin-bottom:16px}
.panel h2{margin:0 0 8px;font-size:17px}pre{background:#f8fafc;padding:12px;border-radius:8px;overflow:auto}
button#load-report{font:inherit;font-weight:600;background:#4f46e5;color:#fff;border:0;border-radius:10px;padding:9px 14px;cursor:pointer}
.ok{color:#15803d}.refused{color:#dc2626}`;
document.head.append(style);

const config = (await (await fetch('/api/config')).json()) as Config;
createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <GatehouseProvider publishableKey={config.publishableKey} baseUrl={config.gatehouseUrl} appearance={{ applicationName: 'Acme' }}>
      <App config={config} />
    </GatehouseProvider>
  </StrictMode>,
);
