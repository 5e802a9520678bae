import type { Selectable } from 'kysely';
import type { EnvironmentsTable } from '../db/schema.js';
import type { EnvironmentId } from '../lib/ids.js';
import { AuthMethods, type EmailVerification, type MfaPolicy } from '@gatehouse/contract';
import type { Static } from 'typebox';

export const TOKEN_ALGORITHMS = ['RS256', 'ES256', 'EdDSA'] as const;
export type TokenAlgorithm = (typeof TOKEN_ALGORITHMS)[number];
export type EnvironmentType = 'development' | 'production';

/** The sign-in methods' switches; the contract's shape. */
export const AuthMethodsSchema = AuthMethods;

export interface EnvironmentSettings {
  /** Verified domain: the origin lock admits it and its subdomains over https. */
  domain: string | null;
  /** Exact origins (scheme://host[:port]) also admitted by the origin lock. */
  callbackOrigins: string[];
  authMethods: Static<typeof AuthMethodsSchema>;
  signUp: boolean;
  accessTokenTtlSeconds: number;
  tokenAlgorithm: TokenAlgorithm;
  /** Null means the default for the environment type. */
  rateLimitPerMinute: number | null;
  sessionLifetimeSeconds: number;
  sessionInactivitySeconds: number;
  /** Whether signed-in users may create organizations (POST /v1/me/organizations). */
  usersCanCreateOrganizations: boolean;
  /** "required": a password sign-up is verified by an emailed code before the account exists. */
  emailVerification: EmailVerification;
  /** Second factors: "off", "optional" or "required" (docs/mfa.md). */
  mfa: MfaPolicy;
  /** Custom access-token claims (sessions/claims-template.ts), checked when saved; null for none. */
  sessionClaims: Record<string, unknown> | null;
}

export const DEFAULT_RATE_LIMIT: Record<EnvironmentType, number> = { development: 1000, production: 6000 };

export const ACCESS_TOKEN_TTL = { min: 30, max: 3600, default: 300 } as const;
const DAY = 86_400;
/** Bounds of the session lifetime and inactivity timeout, in seconds: 5 minutes to 1 year. */
export const SESSION_LIFETIME = { min: 300, max: 365 * DAY } as const;

export function defaultSettings(): EnvironmentSettings {
  return {
    domain: null,
    callbackOrigins: [],
    authMethods: { password: true, magicLink: true, emailCode: true, sso: false, passkey: false },
    signUp: true,
    accessTokenTtlSeconds: ACCESS_TOKEN_TTL.default,
    tokenAlgorithm: 'RS256',
    rateLimitPerMinute: null,
    sessionLifetimeSeconds: 30 * DAY,
    sessionInactivitySeconds: 7 * DAY,
    usersCanCreateOrganizations: true,
    // What settings stored before the field read as: existing environments keep their behaviour.
    emailVerification: 'off',
    mfa: 'optional',
    sessionClaims: null,
  };
}

/** The settings of an environment created now: sign-up verification on. */
export function newEnvironmentSettings(): EnvironmentSettings {
  return { ...defaultSettings(), emailVerification: 'required' };
}

/** Stored settings omit defaults that were never changed; fill them in on read. */
export function parseSettings(json: string): EnvironmentSettings {
  const stored = JSON.parse(json) as Partial<EnvironmentSettings>;
  const defaults = defaultSettings();
  return { ...defaults, ...stored, authMethods: { ...defaults.authMethods, ...stored.authMethods } };
}

export interface Environment {
  id: EnvironmentId;
  projectId: string;
  type: EnvironmentType;
  publishableKey: string;
  settings: EnvironmentSettings;
}

export function effectiveRateLimit(environment: Environment): number {
  return environment.settings.rateLimitPerMinute ?? DEFAULT_RATE_LIMIT[environment.type];
}

/** An environments row as the service sees it (a row mapper, no SQL: other domains' joins use it too). */
export function toEnvironment(row: Selectable<EnvironmentsTable>): Environment {
  return {
    id: row.id,
    projectId: row.project_id,
    type: row.type,
    publishableKey: row.publishable_key,
    settings: parseSettings(row.settings),
  };
}
