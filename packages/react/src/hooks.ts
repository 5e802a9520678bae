import { useCallback, useEffect, useState } from 'react';
import type { GatehouseState, OrganizationSummary, SessionInfo, User, UserOrganization } from '@gatehouse/js';
import { useGatehouse, useGatehouseState } from './context.js';

/** What `has()` checks: a permission ("org:manage") or a role ("admin") in the active organization. */
export type HasParams = { permission: string; role?: never } | { role: string; permission?: never };

export type UseAuthReturn =
  | {
      isLoaded: false;
      isSignedIn: undefined;
      userId: undefined;
      sessionId: undefined;
      orgId: undefined;
      orgRole: undefined;
      orgSlug: undefined;
      actor: undefined;
      getToken: (options?: { forceRefresh?: boolean }) => Promise<string | null>;
      signOut: () => Promise<GatehouseState>;
      has: (params: HasParams) => false;
    }
  | {
      isLoaded: true;
      isSignedIn: false;
      userId: null;
      sessionId: null;
      orgId: null;
      orgRole: null;
      orgSlug: null;
      actor: null;
      getToken: (options?: { forceRefresh?: boolean }) => Promise<string | null>;
      signOut: () => Promise<GatehouseState>;
      has: (params: HasParams) => false;
    }
  | {
      isLoaded: true;
      isSignedIn: true;
      userId: string;
      sessionId: string;
      orgId: string | null;
      orgRole: string | null;
      orgSlug: string | null;
      /** Who acts, while the session is impersonated (the token's `act`); null otherwise. */
      actor: { sub: string } | null;
      getToken: (options?: { forceRefresh?: boolean }) => Promise<string | null>;
      signOut: () => Promise<GatehouseState>;
      has: (params: HasParams) => boolean;
    };

/** Checks the active organization's role or permission, as the access token's claims say. */
export function hasAccess(session: SessionInfo | null, params: HasParams): boolean {
  if (!session?.organizationId) return false;
  if (params.permission !== undefined) return session.organizationPermissions.includes(params.permission);
  return session.organizationRole === params.role;
}

export function useAuth(): UseAuthReturn {
  const client = useGatehouse();
  const state = useGatehouseState();
  const getToken = useCallback((options?: { forceRefresh?: boolean }) => client.getToken(options), [client]);
  const signOut = useCallback(() => client.signOut(), [client]);
  if (!state.isLoaded) {
    return {
      isLoaded: false,
      isSignedIn: undefined,
      userId: undefined,
      sessionId: undefined,
      orgId: undefined,
      orgRole: undefined,
      orgSlug: undefined,
      actor: undefined,
      getToken,
      signOut,
      has: () => false,
    };
  }
  if (!state.isSignedIn || !state.session) {
    return { isLoaded: true, isSignedIn: false, userId: null, sessionId: null, orgId: null, orgRole: null, orgSlug: null, actor: null, getToken, signOut, has: () => false };
  }
  const session = state.session;
  return {
    isLoaded: true,
    isSignedIn: true,
    userId: session.userId,
    sessionId: session.id,
    orgId: session.organizationId,
    orgRole: session.organizationRole,
    orgSlug: state.organization?.id === session.organizationId ? (state.organization?.slug ?? null) : null,
    actor: session.actor,
    getToken,
    signOut,
    has: (params) => hasAccess(session, params),
  };
}

export type UseUserReturn =
  | { isLoaded: false; isSignedIn: undefined; user: undefined }
  | { isLoaded: true; isSignedIn: false; user: null }
  | { isLoaded: true; isSignedIn: true; user: User | null };

/** The signed-in user's profile (null for a moment after sign-in, while it loads). */
export function useUser(): UseUserReturn {
  const state = useGatehouseState();
  if (!state.isLoaded) return { isLoaded: false, isSignedIn: undefined, user: undefined };
  if (!state.isSignedIn) return { isLoaded: true, isSignedIn: false, user: null };
  return { isLoaded: true, isSignedIn: true, user: state.user };
}

export type UseSessionReturn =
  | { isLoaded: false; isSignedIn: undefined; session: undefined }
  | { isLoaded: true; isSignedIn: false; session: null }
  | { isLoaded: true; isSignedIn: true; session: SessionInfo };

export function useSession(): UseSessionReturn {
  const state = useGatehouseState();
  if (!state.isLoaded) return { isLoaded: false, isSignedIn: undefined, session: undefined };
  if (!state.isSignedIn || !state.session) return { isLoaded: true, isSignedIn: false, session: null };
  return { isLoaded: true, isSignedIn: true, session: state.session };
}

export interface UseOrganizationReturn {
  isLoaded: boolean;
  /** The organization the session acts as, or null. */
  organization: OrganizationSummary | null;
  /** The user's role in it, from the session's claims. */
  membership: { role: string; permissions: string[] } | null;
  /** The full record (GET /v1/me/organization), loaded on demand; refreshed by `reload`. */
  details: UserOrganization | null;
  reload: () => Promise<void>;
}

export function useOrganization(): UseOrganizationReturn {
  const client = useGatehouse();
  const state = useGatehouseState();
  const [details, setDetails] = useState<UserOrganization | null>(null);
  const orgId = state.session?.organizationId ?? null;
  const reload = useCallback(async () => {
    if (!client.state.session?.organizationId) return setDetails(null);
    setDetails(await client.organization.get());
  }, [client]);
  useEffect(() => {
    setDetails(null);
    if (orgId) reload().catch(() => undefined);
  }, [orgId, reload]);
  const session = state.session;
  return {
    isLoaded: state.isLoaded,
    organization: state.organization,
    membership: session?.organizationId && session.organizationRole ? { role: session.organizationRole, permissions: session.organizationPermissions } : null,
    details: details?.id === orgId ? details : null,
    reload,
  };
}

export interface UseOrganizationListReturn {
  isLoaded: boolean;
  /** Every organization the user belongs to, with their role in each. */
  organizations: OrganizationSummary[];
  /** Acts as this organization (null: personal account); new tokens carry its claims. */
  setActive: (organizationId: string | null) => Promise<GatehouseState>;
  /** Creates one (the user becomes its owner) and, unless told not to, switches to it. */
  createOrganization: (params: { name: string; slug?: string }, options?: { setActive?: boolean }) => Promise<UserOrganization>;
}

export function useOrganizationList(): UseOrganizationListReturn {
  const client = useGatehouse();
  const state = useGatehouseState();
  const setActive = useCallback((id: string | null) => client.setActiveOrganization(id), [client]);
  const createOrganization = useCallback(
    async (params: { name: string; slug?: string }, options: { setActive?: boolean } = {}) => {
      const created = await client.organizations.create(params);
      if (options.setActive !== false) await client.setActiveOrganization(created.id);
      return created;
    },
    [client],
  );
  return { isLoaded: state.isLoaded, organizations: state.organizations, setActive, createOrganization };
}
