'use client';
/**
 * The client half: @gatehouse/react's provider in cookie mode, and its components and hooks. One
 * 'use client' module, so server components can render them.
 */
import { useEffect, useRef, useState, type ReactNode } from 'react';
import { useRouter } from 'next/navigation';
import { createGatehouse, type Gatehouse, type GatehouseState } from '@gatehouse/js';
import { GatehouseProvider as ReactProvider, type Appearance } from '@gatehouse/react';

export interface ClientProviderProps {
  publishableKey: string;
  baseUrl: string;
  appearance?: Appearance;
  children?: ReactNode;
}

/** Whether the server, rendering this page from the cookie, saw a signed-in user: a cookie with a live token. */
function cookieSignedIn(): boolean {
  if (typeof document === 'undefined') return false;
  const token = /(?:^|;\s*)__gh_session=([^;]+)/.exec(document.cookie)?.[1];
  try {
    const payload = token?.split('.')[1]?.replace(/-/g, '+').replace(/_/g, '/');
    return payload !== undefined && (JSON.parse(atob(payload)) as { exp: number }).exp * 1000 > Date.now();
  } catch {
    return false;
  }
}

const who = (state: GatehouseState) => (state.isSignedIn ? `${state.session?.id ?? ''} ${state.session?.organizationId ?? ''}` : 'signed-out');

/**
 * Server components are rendered from the cookie; when the browser's session changes (sign-in,
 * sign-out, another organization, in this tab or another), they are rendered again.
 */
export function ClientGatehouseProvider({ publishableKey, baseUrl, appearance, children }: ClientProviderProps) {
  const router = useRouter();
  const [client] = useState<Gatehouse>(() => createGatehouse({ publishableKey, baseUrl, sessionCookie: true }));
  const [serverSignedIn] = useState(cookieSignedIn);
  const seen = useRef<string | undefined>(undefined);
  useEffect(
    () =>
      client.subscribe((state) => {
        if (!state.isLoaded) return;
        const now = who(state);
        const before = seen.current;
        seen.current = now;
        if (before === undefined ? state.isSignedIn !== serverSignedIn : before !== now) router.refresh();
      }),
    [client, router, serverSignedIn],
  );
  return (
    <ReactProvider client={client} {...(appearance ? { appearance } : {})}>
      {children}
    </ReactProvider>
  );
}

export {
  CreateOrganization,
  OrganizationProfile,
  OrganizationSwitcher,
  Protect,
  SignedIn,
  SignedOut,
  SignIn,
  SignUp,
  UserButton,
  UserProfile,
  useAuth,
  useGatehouse,
  useOrganization,
  useOrganizationList,
  useSession,
  useUser,
} from '@gatehouse/react';
