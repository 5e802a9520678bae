import type { FastifyInstance, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { constantTimeEqual, sha256Hex } from '../lib/crypto.js';
import type { TenancyService } from '../tenancy/service.js';
import type { Environment } from '../tenancy/settings.js';
import { ApiError, notFound } from '../lib/errors.js';
import { isOriginAllowed } from '../tenancy/origin.js';

export type CredentialKind = 'publishable' | 'secret' | 'session' | 'platform';

export interface SessionIdentity {
  userId: string;
  sessionId: string;
  /** The organization the session acts as, read from the session row with the request (not from claims). */
  activeOrganizationId: string | null;
  /** The verified access-token claims; a snapshot that authorizes nothing by itself. */
  claims: Record<string, unknown>;
}

export type AuthContext =
  | { kind: 'publishable'; environment: Environment }
  | { kind: 'secret'; environment: Environment; secretKeyId: string }
  | { kind: 'session'; environment: Environment; session: SessionIdentity }
  | {
      kind: 'platform';
      /** Set when an operator's access token (not the platform key) made the request. */
      operator?: { userId: string; sessionId: string };
      /** Set on the platform's copies of secret-key routes (/v1/platform/environments/{id}/users…). */
      environment?: Environment;
    };

/** What the credentials check needs of the operators' reserved environment (operators/service.ts). */
export interface OperatorsDirectory {
  /** The operators' environment id. */
  environmentId(): Promise<string>;
  /** Whether a project or environment id is the reserved one: the platform API answers 404 for it. */
  isReserved(id: string): Promise<boolean>;
}

/** Verifies an access token for Gatehouse's own `/v1/me*`, or throws a 401 ApiError. */
export type AccessTokenVerifier = (
  token: string,
  request: FastifyRequest,
) => Promise<{ environment: Environment; session: SessionIdentity }>;

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The credential kinds this route accepts. Absent means a public route. */
    credentials?: readonly CredentialKind[];
    /** The platform's copy of a secret-key route: the environment is the path's `environmentId`. */
    actsInEnvironment?: boolean;
  }
  interface FastifyRequest {
    auth: AuthContext | null;
  }
}

const DESCRIPTION: Record<CredentialKind, string> = {
  publishable: 'a publishable key (pk_test_… or pk_live_…)',
  secret: 'a secret key (sk_test_… or sk_live_…), sent from your backend only',
  session: 'a session access token (the accessToken returned by sign-in)',
  platform: 'the platform key (plk_…)',
};

/** What a surface takes, where it differs from the credential's own name. */
const ACCEPTED: Partial<Record<CredentialKind, string>> = {
  platform: "the platform key (plk_…, from a server only) or an operator's access token (the console's)",
};

const WHY_REFUSED: Partial<Record<CredentialKind, string>> = {
  publishable: ' A publishable key ships in every browser bundle, so it can never act as a signed-in person.',
};

export function classifyCredential(token: string): CredentialKind | 'refresh' | null {
  if (token.startsWith('pk_test_') || token.startsWith('pk_live_')) return 'publishable';
  if (token.startsWith('sk_test_') || token.startsWith('sk_live_')) return 'secret';
  if (token.startsWith('plk_')) return 'platform';
  if (token.startsWith('rt_')) return 'refresh';
  if (/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*\.[A-Za-z0-9_-]*$/.test(token)) return 'session';
  return null;
}

function describeAccepted(kinds: readonly CredentialKind[]): string {
  return kinds.map((k) => ACCEPTED[k] ?? DESCRIPTION[k]).join(' or ');
}

function unauthenticated(message: string): ApiError {
  return new ApiError('unauthenticated', message);
}

export function bearerToken(request: FastifyRequest, accepted: readonly CredentialKind[]): string {
  const header = request.headers.authorization;
  if (header === undefined || header.trim() === '') {
    throw unauthenticated(`Missing credential. Send "Authorization: Bearer <credential>" with ${describeAccepted(accepted)}.`);
  }
  const match = /^Bearer +(\S+) *$/i.exec(header);
  if (!match) {
    throw unauthenticated(`Malformed Authorization header. Use "Authorization: Bearer <credential>" with ${describeAccepted(accepted)}.`);
  }
  return match[1]!;
}

export interface CredentialOptions {
  tenancy: TenancyService;
  platformKeyHash: string;
  verifyAccessToken: AccessTokenVerifier;
  operators: OperatorsDirectory;
}

/**
 * Resolves the credential of every request once, into `request.auth`, and refuses the request when
 * the credential is missing, unknown, of the wrong kind for the route, or (for publishable keys)
 * sent from an origin the environment does not allow.
 */
export const credentialsPlugin = fp<CredentialOptions>(
  async (app: FastifyInstance, options) => {
    app.decorateRequest('auth', null);

    app.addHook('onRequest', async (request) => {
      const accepted = request.routeOptions.config.credentials;
      if (!accepted) return;
      request.auth = await resolve(request, accepted, options);
    });
  },
  { name: 'gatehouse-credentials' },
);

async function resolve(request: FastifyRequest, accepted: readonly CredentialKind[], options: CredentialOptions): Promise<AuthContext> {
  const token = bearerToken(request, accepted);
  const kind = classifyCredential(token);
  if (kind === null) {
    throw unauthenticated(`Unrecognized credential. This endpoint takes ${describeAccepted(accepted)}.`);
  }
  if (kind === 'refresh') {
    throw new ApiError(
      'credential_not_accepted',
      `A refresh token is not a bearer credential; exchange it at POST /v1/auth/refresh. This endpoint takes ${describeAccepted(accepted)}.`,
    );
  }
  // On the platform surface an access token is an operator's: the console's browser credential.
  if (kind === 'session' && accepted.includes('platform') && !accepted.includes('session')) {
    return hideReserved(request, options, await resolveOperator(request, token, options));
  }
  if (!accepted.includes(kind)) {
    throw new ApiError(
      'credential_not_accepted',
      `This endpoint does not accept ${DESCRIPTION[kind]}; it takes ${describeAccepted(accepted)}.${WHY_REFUSED[kind] ?? ''}`,
    );
  }

  const origin = request.headers.origin;
  switch (kind) {
    case 'publishable': {
      const environment = await options.tenancy.resolvePublishableKey(token);
      if (!environment) throw unauthenticated('Unknown publishable key. Copy it again from the environment it belongs to.');
      if (origin !== undefined && !isOriginAllowed(environment, origin)) {
        throw new ApiError(
          'origin_not_allowed',
          `Origin ${JSON.stringify(origin)} is not allowed for this environment. Requests with a publishable key must come from the environment's verified domain, its subdomains, or a registered callback origin; add the origin in the environment settings.`,
        );
      }
      return { kind, environment };
    }
    case 'secret': {
      if (origin !== undefined) {
        throw new ApiError(
          'credential_not_accepted',
          'Secret keys must never be used from a browser, and this request carries an Origin header. Call this endpoint from your backend, and rotate the key if it was exposed.',
        );
      }
      const resolved = await options.tenancy.resolveSecretKey(token);
      if (!resolved) throw unauthenticated('Unknown or revoked secret key. Create a new one for the environment.');
      return { kind, ...resolved };
    }
    case 'platform': {
      // The operator's key administers every project: a page that holds it has leaked it.
      if (origin !== undefined) {
        throw new ApiError(
          'credential_not_accepted',
          'The platform key must never be used from a browser, and this request carries an Origin header. Call the platform API from a server or the command line, and change GATEHOUSE_PLATFORM_KEY if the key was exposed.',
        );
      }
      if (!constantTimeEqual(sha256Hex(token), options.platformKeyHash)) {
        throw unauthenticated('Unknown platform key. Use the value of GATEHOUSE_PLATFORM_KEY, or the key generated on first start.');
      }
      return hideReserved(request, options, { kind });
    }
    case 'session':
      return { kind, ...(await options.verifyAccessToken(token, request)) };
  }
}

type PlatformAuth = AuthContext & { kind: 'platform' };

async function resolveOperator(request: FastifyRequest, token: string, options: CredentialOptions): Promise<PlatformAuth> {
  const { environment, session } = await options.verifyAccessToken(token, request);
  if (environment.id !== (await options.operators.environmentId())) {
    throw new ApiError(
      'credential_not_accepted',
      "This access token belongs to an application's environment, not to an operator. The platform API takes the platform key (plk_…, from a server only) or an operator's access token (sign in to the console).",
    );
  }
  // Bearer tokens are not ambient, but the console's origin is known: nothing else should hold its tokens.
  const origin = request.headers.origin;
  if (origin !== undefined && !isOriginAllowed(environment, origin)) {
    throw new ApiError(
      'origin_not_allowed',
      `Origin ${JSON.stringify(origin)} is not the console's. Use the console at the server's base URL.`,
    );
  }
  return { kind: 'platform', operator: { userId: session.userId, sessionId: session.sessionId } };
}

/**
 * The operators' reserved project is not the platform API's to show or change: a path naming it is
 * 404, exactly like an id that does not exist. Copies of secret-key routes get their environment here.
 */
async function hideReserved(request: FastifyRequest, options: CredentialOptions, auth: PlatformAuth): Promise<AuthContext> {
  const params = (request.params ?? {}) as Record<string, unknown>;
  for (const name of ['projectId', 'environmentId'] as const) {
    const id = params[name];
    if (typeof id === 'string' && (await options.operators.isReserved(id))) {
      throw notFound(`${name === 'projectId' ? 'Project' : 'Environment'} ${id}`);
    }
  }
  if (request.routeOptions.config.actsInEnvironment) {
    const environment = await options.tenancy.getEnvironment(String(params.environmentId));
    return { ...auth, environment };
  }
  return auth;
}

/** The environment of an environment-scoped request. Routes only call this behind a credential. */
export function environmentOf(request: FastifyRequest): Environment {
  const auth = request.auth;
  if (!auth || (auth.kind === 'platform' && !auth.environment)) throw new Error('Route has no environment credential');
  return auth.environment!;
}

export function sessionOf(request: FastifyRequest): { environment: Environment; session: SessionIdentity } {
  const auth = request.auth;
  if (!auth || auth.kind !== 'session') throw new Error('Route has no session credential');
  return auth;
}
