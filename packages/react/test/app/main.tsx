// The test application: the components as an application uses them, chosen by the query string.
import { StrictMode, type ReactElement } from 'react';
import { createRoot } from 'react-dom/client';
import {
  CreateOrganization,
  GatehouseProvider,
  OrganizationProfile,
  OrganizationSwitcher,
  Protect,
  SignedIn,
  SignedOut,
  SignIn,
  SignUp,
  useAuth,
  UserButton,
  UserProfile,
  useGatehouse,
} from '../../src/index.js';

const params = new URLSearchParams(location.search);
const view = params.get('view') ?? 'app';
const theme = (params.get('theme') ?? 'light') as 'light' | 'dark';
document.body.style.background = theme === 'dark' ? '#020617' : '#f1f5f9';

function Status() {
  const auth = useAuth();
  const gh = useGatehouse();
  (window as unknown as { gh: typeof gh }).gh = gh;
  return (
    <p id="status" data-loaded={String(auth.isLoaded)} data-signed-in={String(auth.isSignedIn)} data-org-role={auth.isLoaded && auth.isSignedIn ? (auth.orgRole ?? '') : ''} data-actor={auth.isLoaded && auth.isSignedIn ? (auth.actor?.sub ?? '') : ''} style={{ color: theme === 'dark' ? '#94a3b8' : '#475569', font: '12px system-ui' }}>
      {!auth.isLoaded ? 'loading' : auth.isSignedIn ? `signed in${auth.orgRole ? ` as ${auth.orgRole}` : ''}` : 'signed out'}
    </p>
  );
}

function Shell() {
  const single: Record<string, ReactElement> = {
    'sign-in': <SignIn signUpUrl="?view=sign-up" />,
    'sign-up': <SignUp signInUrl="?view=sign-in" />,
    'user-profile': <UserProfile />,
    'organization-profile': <OrganizationProfile />,
    'create-organization': <CreateOrganization />,
  };
  return (
    <div style={{ padding: 24, minHeight: 560 }}>
      <Status />
      {view !== 'app' ? (
        <div style={{ display: 'flex', justifyContent: 'center' }}>{single[view]}</div>
      ) : (
        <>
          <SignedOut>
            <div style={{ display: 'flex', justifyContent: 'center' }}><SignIn signUpUrl="?view=sign-up" /></div>
          </SignedOut>
          <SignedIn>
            <header style={{ display: 'flex', justifyContent: 'space-between', alignItems: 'center', marginBottom: 24 }}>
              <OrganizationSwitcher />
              <UserButton />
            </header>
            <Protect permission="org:manage" fallback={<p id="protected">not an organization manager</p>}>
              <p id="protected">organization manager area</p>
            </Protect>
          </SignedIn>
        </>
      )}
    </div>
  );
}

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <GatehouseProvider publishableKey={params.get('pk')!} baseUrl={params.get('base')!} appearance={{ theme, applicationName: 'Acme' }}>
      <Shell />
    </GatehouseProvider>
  </StrictMode>,
);
