/**
 * The client's public state and options, and what the flows (flows.ts) need of the client's core
 * (client.ts): here so that neither imports the other for its types.
 */
import type { SwitchOrganizationBody } from '@gatehouse/contract';
import type { GatehouseError } from './errors.js';
import type { SessionCall } from './http.js';
import type { SessionInfo } from './session.js';
import type { StorageOption } from './storage.js';
import type { OrganizationSummary, SessionTokens, User } from './types.js';

export interface GatehouseOptions {
  publishableKey: string;
  /** The Gatehouse server's root URL, e.g. https://auth.example.com (no /v1). */
  baseUrl: string;
  /** Default: 'localStorage' in browsers, 'memory' elsewhere. */
  storage?: StorageOption;
  /** The fetch to use; default the global one. */
  fetch?: typeof fetch;
  /**
   * Origins besides the page's own (and Gatehouse's) that `gh.fetch` may send the access token to,
   * e.g. `['https://api.example.com']`. Any other URL is refused rather than handed the token.
   */
  backendOrigins?: string[];
  /**
   * Cookie mode, for server-rendered apps (on by default under @gatehouse/nextjs): the access token
   * is mirrored into the first-party cookie `__gh_session` (`Path=/; SameSite=Lax`, `Secure` on
   * https) while signed in, and the cookie is cleared on sign-out. The refresh token never goes into
   * a cookie.
   */
  sessionCookie?: boolean;
}

/** Set while refreshes fail for a reason that does not end the session; the client keeps retrying. */
export interface Degraded {
  reason: 'rate_limited' | 'network' | 'error';
  error: GatehouseError;
  /** When the next attempt is due (ms since the epoch). */
  retryAt: number;
}

export interface GatehouseState {
  /** False until load() has read the stored session. */
  isLoaded: boolean;
  /** Undefined while loading, then true or false. */
  isSignedIn: boolean | undefined;
  user: User | null;
  session: SessionInfo | null;
  /** The organization the session acts as. */
  organization: OrganizationSummary | null;
  /** Every organization the user belongs to. */
  organizations: OrganizationSummary[];
  degraded: Degraded | null;
}

export type Listener = (state: GatehouseState) => void;

/** What the flows need from the client core. */
export interface Core {
  /** A route called with the publishable key. */
  call: SessionCall;
  /** A route called with the user's access token. */
  authed: SessionCall;
  fetch: typeof fetch;
  establish(tokens: SessionTokens): Promise<GatehouseState>;
  /** Switches organization: new tokens for the stored refresh token, under the cross-tab lock. */
  rotate(body: Omit<SwitchOrganizationBody, 'refreshToken'>): Promise<GatehouseState>;
  /** Holds a new access token of the same session (reverification); the refresh token stays. */
  replaceAccessToken(tokens: Omit<SessionTokens, 'refreshToken'>): Promise<GatehouseState>;
  signOut(): Promise<GatehouseState>;
  loadProfile(): Promise<GatehouseState>;
  patchState(patch: Partial<GatehouseState>): GatehouseState;
  state(): GatehouseState;
}
