import { StrictMode, useEffect, useState } from 'react';
import { createRoot } from 'react-dom/client';
import { createGatehouse, type Gatehouse } from '@gatehouse/js';
import { openApi } from './api.js';
import { App } from './app.js';
import { SetupPage } from './pages/setup.js';
import './styles.css';

async function boot(): Promise<void> {
  const root = createRoot(document.getElementById('root')!);
  let config;
  try {
    config = await openApi('GET /v1/console/config');
  } catch (error) {
    root.render(<p className="error" role="alert">The console could not load its configuration: {String(error instanceof Error ? error.message : error)}</p>);
    return;
  }
  // The operators' environment accepts sign-ins from the base URL's origin only.
  const expected = new URL(config.baseUrl).origin;
  if (location.origin !== expected) {
    root.render(
      <main className="center">
        <p className="error" role="alert">
          The console works at the server's base URL. Open <a href={`${expected}/console`}>{expected}/console</a> (or set GATEHOUSE_BASE_URL to
          this address).
        </p>
      </main>,
    );
    return;
  }
  const client = createGatehouse({ publishableKey: config.publishableKey, baseUrl: location.origin });
  root.render(
    <StrictMode>
      <Boot client={client} />
    </StrictMode>,
  );
}

/** The setup link's page until an operator exists; then the console (with its own sign-in). */
function Boot({ client }: { client: Gatehouse }) {
  const [setup, setSetup] = useState(() => location.pathname.endsWith('/console/setup'));
  useEffect(() => {
    document.title = setup ? 'Set up the console · Gatehouse' : 'Gatehouse console';
  }, [setup]);
  if (setup) {
    return (
      <SetupPage
        client={client}
        onDone={() => {
          // Leave the link's URL: its token is spent, and SignIn would read ?token= as a magic link.
          history.replaceState(null, '', '/console#/');
          setSetup(false);
        }}
      />
    );
  }
  return <App client={client} />;
}

void boot();
