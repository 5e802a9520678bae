import { useSyncExternalStore } from 'react';
import type { Gatehouse } from '@gatehouse/js';

/**
 * Shown across the top of every page while the session is impersonated (its token's `act`): who is
 * signed in, who acts, and a way out. The provider mounts it (`impersonationBanner={false}` to place
 * your own), so no application can forget to tell an actor that they are acting as someone else.
 */
export function ImpersonationBanner({ client, theme, style }: { client: Gatehouse; theme: string; style: Record<string, string> }) {
  const state = useSyncExternalStore(
    (listener) => client.subscribe(listener),
    () => client.state,
    () => client.state,
  );
  const actor = state.isSignedIn ? state.session?.actor : null;
  if (!actor) return null;
  const user = state.user;
  const name = user ? ([user.firstName, user.lastName].filter(Boolean).join(' ') || user.email || user.id) : state.session!.userId;
  return (
    <div
      className="gh-root gh-impersonation"
      data-theme={theme}
      style={style}
      role="status"
      data-gh-component="impersonation-banner"
    >
      <span>
        You are signed in as <strong>{name}</strong>, impersonated by <strong>{actor.sub}</strong>
      </span>
      <button type="button" className="gh-impersonation-signout" onClick={() => void client.signOut()}>
        Sign out
      </button>
    </div>
  );
}
