/**
 * Configuration from the environment (or the middleware's options). Variables are read by name at
 * run time, not as `process.env.NAME` (which Next.js inlines at build): one build serves any key.
 */
export interface GatehouseNextOptions {
  /** Default `NEXT_PUBLIC_GATEHOUSE_PUBLISHABLE_KEY`. */
  publishableKey?: string;
  /** Gatehouse's root URL; default `NEXT_PUBLIC_GATEHOUSE_URL`. */
  baseUrl?: string;
  /** For currentUser(); default `GATEHOUSE_SECRET_KEY`. Server only. */
  secretKey?: string;
  /** `{baseUrl}/v1/environments/{id}`; default `GATEHOUSE_ISSUER`, else learned from the publishable key once. */
  issuer?: string;
  /** The environment's public key (PEM or JWK): verification without any fetch. Default `GATEHOUSE_JWT_KEY`. */
  jwtKey?: string;
  /** Where auth.protect() sends a signed-out page request; default `NEXT_PUBLIC_GATEHOUSE_SIGN_IN_URL` or `/sign-in`. */
  signInUrl?: string;
  /** Origins besides the app's own whose pages may send data-changing requests with the cookie. Default `GATEHOUSE_ALLOWED_ORIGINS` (comma-separated). */
  allowedOrigins?: string[];
  /** When set, a token issued to a page on another origin (`azp`) is refused. Default `GATEHOUSE_AUTHORIZED_PARTIES` (comma-separated). */
  authorizedParties?: string[];
}

export interface ResolvedConfig {
  publishableKey: string | undefined;
  baseUrl: string | undefined;
  secretKey: string | undefined;
  issuer: string | undefined;
  jwtKey: string | undefined;
  signInUrl: string;
  allowedOrigins: string[];
  authorizedParties: string[] | undefined;
}

function env(name: string): string | undefined {
  const value = (globalThis as { process?: { env?: Record<string, string | undefined> } }).process?.env?.[name];
  return value === undefined || value === '' ? undefined : value;
}

const list = (value: string | undefined) =>
  value
    ?.split(',')
    .map((item) => item.trim())
    .filter(Boolean);

export function resolveConfig(options: GatehouseNextOptions = {}): ResolvedConfig {
  const parties = options.authorizedParties ?? list(env('GATEHOUSE_AUTHORIZED_PARTIES'));
  return {
    publishableKey: options.publishableKey ?? env('NEXT_PUBLIC_GATEHOUSE_PUBLISHABLE_KEY'),
    baseUrl: (options.baseUrl ?? env('NEXT_PUBLIC_GATEHOUSE_URL'))?.replace(/\/+$/, ''),
    secretKey: options.secretKey ?? env('GATEHOUSE_SECRET_KEY'),
    issuer: options.issuer ?? env('GATEHOUSE_ISSUER'),
    jwtKey: options.jwtKey ?? env('GATEHOUSE_JWT_KEY'),
    signInUrl: options.signInUrl ?? env('NEXT_PUBLIC_GATEHOUSE_SIGN_IN_URL') ?? '/sign-in',
    allowedOrigins: options.allowedOrigins ?? list(env('GATEHOUSE_ALLOWED_ORIGINS')) ?? [],
    authorizedParties: parties,
  };
}

const discovered = new Map<string, Promise<string>>();

/**
 * The issuer tokens must carry. Given (GATEHOUSE_ISSUER), or learned once per process from the
 * publishable key: `GET /v1/environment` names the environment, and the issuer is
 * `{baseUrl}/v1/environments/{id}`. A failed look-up is not remembered, so the next request retries.
 */
export function issuerOf(config: ResolvedConfig): Promise<string> {
  if (config.issuer) return Promise.resolve(config.issuer);
  const { publishableKey, baseUrl } = config;
  if (!publishableKey || !baseUrl) {
    return Promise.reject(
      new TypeError(
        '@gatehouse/nextjs needs NEXT_PUBLIC_GATEHOUSE_PUBLISHABLE_KEY and NEXT_PUBLIC_GATEHOUSE_URL (or GATEHOUSE_ISSUER) to know which tokens to accept.',
      ),
    );
  }
  const key = `${baseUrl} ${publishableKey}`;
  let issuer = discovered.get(key);
  if (!issuer) {
    issuer = (async () => {
      const response = await fetch(`${baseUrl}/v1/environment`, {
        headers: { authorization: `Bearer ${publishableKey}`, accept: 'application/json' },
        signal: AbortSignal.timeout(5_000),
      });
      if (!response.ok) throw new Error(`GET ${baseUrl}/v1/environment answered ${response.status}: check the publishable key and URL.`);
      const { id } = (await response.json()) as { id?: unknown };
      if (typeof id !== 'string') throw new Error(`GET ${baseUrl}/v1/environment did not name an environment.`);
      return `${baseUrl}/v1/environments/${id}`;
    })();
    issuer.catch(() => discovered.delete(key));
    discovered.set(key, issuer);
  }
  return issuer;
}
