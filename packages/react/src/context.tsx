import { createContext, useContext, useEffect, useInsertionEffect, useState, useSyncExternalStore, type ReactNode } from 'react';
import { createGatehouse, type Gatehouse, type GatehouseOptions, type GatehouseState } from '@gatehouse/js';
import { STYLES } from './styles.js';
import { ImpersonationBanner } from './ui/impersonation-banner.js';

export type Theme = 'light' | 'dark' | 'auto';

/** CSS variables of the components; each one overrides the theme's value. */
export interface Variables {
  colorPrimary?: string;
  colorPrimaryText?: string;
  colorBackground?: string;
  colorText?: string;
  colorMuted?: string;
  colorBorder?: string;
  colorDanger?: string;
  radius?: string;
  fontFamily?: string;
}

export interface Appearance {
  theme?: Theme;
  variables?: Variables;
  /** Shown at the top of SignIn and SignUp. */
  logoUrl?: string;
  /** The product's name, shown under the logo ("Sign in to …"). */
  applicationName?: string;
}

export interface GatehouseProviderProps extends Partial<GatehouseOptions> {
  /** An existing client instead of publishableKey and baseUrl (one per page). */
  client?: Gatehouse;
  appearance?: Appearance;
  /** Shows a banner while the session is impersonated (default true); false to render your own from `useSession().session.actor`. */
  impersonationBanner?: boolean;
  children?: ReactNode;
}

interface ContextValue {
  client: Gatehouse;
  appearance: Appearance;
}

const GatehouseContext = createContext<ContextValue | null>(null);

const VARIABLE_NAMES: Record<keyof Variables, string> = {
  colorPrimary: '--gh-color-primary',
  colorPrimaryText: '--gh-color-primary-text',
  colorBackground: '--gh-color-background',
  colorText: '--gh-color-text',
  colorMuted: '--gh-color-muted',
  colorBorder: '--gh-color-border',
  colorDanger: '--gh-color-danger',
  radius: '--gh-radius',
  fontFamily: '--gh-font-family',
};

/** Inline style carrying the appearance's variable overrides. */
export function variableStyle(variables: Variables | undefined): Record<string, string> {
  const style: Record<string, string> = {};
  for (const [key, value] of Object.entries(variables ?? {})) {
    const name = VARIABLE_NAMES[key as keyof Variables];
    if (name && value) style[name] = value;
  }
  return style;
}

/**
 * Makes one Gatehouse client for the tree and loads it. Until the stored session is read,
 * `useAuth().isLoaded` is false and neither SignedIn nor SignedOut renders: no flash of the wrong UI.
 */
export function GatehouseProvider(props: GatehouseProviderProps) {
  const [client] = useState<Gatehouse>(() => {
    if (props.client) return props.client;
    if (!props.publishableKey || !props.baseUrl) {
      throw new Error('GatehouseProvider needs publishableKey and baseUrl (your Gatehouse server root), or a client.');
    }
    const { children: _children, appearance: _appearance, client: _client, impersonationBanner: _banner, ...options } = props;
    return createGatehouse(options as GatehouseOptions);
  });

  // The components' stylesheet, once per document, before anything paints.
  useInsertionEffect(() => {
    if (typeof document === 'undefined' || document.getElementById('gatehouse-styles')) return;
    const style = document.createElement('style');
    style.id = 'gatehouse-styles';
    style.textContent = STYLES;
    document.head.prepend(style);
  }, []);

  useEffect(() => {
    void client.load().then(() => {
      // A hosted page's redirect back carries a one-time handoff in the fragment.
      if (typeof location !== 'undefined' && location.hash.includes('__gh_handoff=')) {
        return client.handleRedirect().catch(() => undefined);
      }
      return undefined;
    });
  }, [client]);

  const value = { client, appearance: props.appearance ?? {} };
  return (
    <GatehouseContext.Provider value={value}>
      {props.impersonationBanner === false ? null : (
        <ImpersonationBanner client={client} theme={value.appearance.theme ?? 'light'} style={variableStyle(value.appearance.variables)} />
      )}
      {props.children}
    </GatehouseContext.Provider>
  );
}

export function useGatehouseContext(): ContextValue {
  const value = useContext(GatehouseContext);
  if (!value) throw new Error('Gatehouse hooks and components must be inside <GatehouseProvider>.');
  return value;
}

/** The client itself, for the flows the hooks do not wrap. */
export function useGatehouse(): Gatehouse {
  return useGatehouseContext().client;
}

/** The client's state, re-rendering on every change. */
export function useGatehouseState(): GatehouseState {
  const client = useGatehouse();
  return useSyncExternalStore(
    (listener) => client.subscribe(listener),
    () => client.state,
    () => client.state,
  );
}
