/**
 * The interstitial page's script (bundled with @gatehouse/js into one inline script at build). It
 * refreshes the session from storage in cookie mode, then reloads the page the user asked for.
 */
import { createGatehouse, type GatehouseState } from '@gatehouse/js';

const LOOP_KEY = '__gh_interstitial';
const status = document.getElementById('gh-interstitial');
const config = JSON.parse(document.getElementById('__gh_config')?.textContent ?? '{}') as { publishableKey: string; baseUrl: string };

/** Guards against a reload loop (e.g. the app server's clock far ahead of Gatehouse's). */
function mayReload(): boolean {
  const now = Date.now();
  const recent = (JSON.parse(sessionStorage.getItem(LOOP_KEY) ?? '[]') as number[]).filter((t) => now - t < 60_000);
  recent.push(now);
  sessionStorage.setItem(LOOP_KEY, JSON.stringify(recent));
  return recent.length <= 3;
}

function reload(): void {
  if (mayReload()) location.reload();
  else if (status) status.textContent = 'Your session could not be renewed: this server keeps refusing it. Check that its clock is right, then reload.';
}

const settled = (state: GatehouseState) =>
  state.isLoaded && (!state.isSignedIn || (state.degraded === null && state.session !== null && state.session.expiresAt > Date.now()));

const gh = createGatehouse({ publishableKey: config.publishableKey, baseUrl: config.baseUrl, sessionCookie: true });
void gh.load().then((state) => {
  if (settled(state)) return reload();
  if (status) status.textContent = 'Reconnecting to the sign-in service…';
  // Degraded (network, 429): the client retries on its own; reload once it has a fresh token.
  const stop = gh.subscribe((next) => {
    if (!settled(next)) return;
    stop();
    reload();
  });
});
