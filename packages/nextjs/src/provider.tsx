import type { ReactNode } from 'react';
import type { Appearance } from '@gatehouse/react';
import { ClientGatehouseProvider } from './client.js';

export interface GatehouseProviderProps {
  /** Default `NEXT_PUBLIC_GATEHOUSE_PUBLISHABLE_KEY`. */
  publishableKey?: string;
  /** Gatehouse's root URL; default `NEXT_PUBLIC_GATEHOUSE_URL`. */
  baseUrl?: string;
  appearance?: Appearance;
  children?: ReactNode;
}

const env = (name: string) => (globalThis as { process?: { env?: Record<string, string | undefined> } }).process?.env?.[name];

/**
 * Wrap the root layout in it. It reads the keys on the server at run time (so one build serves any
 * environment) and renders @gatehouse/react's provider in cookie mode: the access token is
 * mirrored into `__gh_session` for the middleware and `auth()`.
 */
export function GatehouseProvider({ publishableKey, baseUrl, appearance, children }: GatehouseProviderProps) {
  const key = publishableKey ?? env('NEXT_PUBLIC_GATEHOUSE_PUBLISHABLE_KEY');
  const url = baseUrl ?? env('NEXT_PUBLIC_GATEHOUSE_URL');
  if (!key || !url) {
    throw new Error('GatehouseProvider needs NEXT_PUBLIC_GATEHOUSE_PUBLISHABLE_KEY and NEXT_PUBLIC_GATEHOUSE_URL (or the publishableKey and baseUrl props).');
  }
  return (
    <ClientGatehouseProvider publishableKey={key} baseUrl={url} {...(appearance ? { appearance } : {})}>
      {children}
    </ClientGatehouseProvider>
  );
}
