import type { ReactNode } from 'react';
import { useAuth, type HasParams } from './hooks.js';

/** Renders its children only once loaded and signed in. */
export function SignedIn({ children }: { children?: ReactNode }) {
  const auth = useAuth();
  return auth.isLoaded && auth.isSignedIn ? <>{children}</> : null;
}

/** Renders its children only once loaded and signed out. */
export function SignedOut({ children }: { children?: ReactNode }) {
  const auth = useAuth();
  return auth.isLoaded && !auth.isSignedIn ? <>{children}</> : null;
}

export type ProtectProps = { children?: ReactNode; fallback?: ReactNode } & (
  | { permission: string; role?: never; condition?: never }
  | { role: string; permission?: never; condition?: never }
  | { condition: (has: (params: HasParams) => boolean) => boolean; permission?: never; role?: never }
  | { permission?: never; role?: never; condition?: never }
);

/**
 * Renders its children when the user is signed in and (if given) has the permission or role in the
 * active organization; otherwise the fallback. This is for the UI only: the server decides access.
 */
export function Protect(props: ProtectProps) {
  const auth = useAuth();
  if (!auth.isLoaded) return null;
  let allowed: boolean = auth.isSignedIn;
  if (allowed && props.permission !== undefined) allowed = auth.has({ permission: props.permission });
  else if (allowed && props.role !== undefined) allowed = auth.has({ role: props.role });
  else if (allowed && props.condition) allowed = props.condition(auth.has);
  return <>{allowed ? props.children : (props.fallback ?? null)}</>;
}
