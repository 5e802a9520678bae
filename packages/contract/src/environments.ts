import { Type, type Static } from 'typebox';
import { List, Page } from './lists.js';
import { define } from './registry.js';

export const EnvironmentType = Type.Union([Type.Literal('development'), Type.Literal('production')]);
export type EnvironmentType = Static<typeof EnvironmentType>;

export const TokenAlgorithm = Type.Union([Type.Literal('RS256'), Type.Literal('ES256'), Type.Literal('EdDSA')]);
export type TokenAlgorithm = Static<typeof TokenAlgorithm>;

/**
 * Whether a password sign-up must prove its address with an emailed code before the account
 * exists. "required" for environments created since it exists; older ones keep "off".
 */
export const EmailVerification = Type.Union([Type.Literal('required'), Type.Literal('off')]);
export type EmailVerification = Static<typeof EmailVerification>;

/**
 * Second factors (docs/mfa.md): "off" refuses enrolment and asks for none; "optional" lets users
 * add one; "required" makes every user have one.
 */
export const MfaPolicy = Type.Union([Type.Literal('off'), Type.Literal('optional'), Type.Literal('required')], {
  description: 'Second factors: off, optional (the default) or required',
});
export type MfaPolicy = Static<typeof MfaPolicy>;

/** Which sign-in methods an environment offers. */
export const AuthMethods = define(
  'AuthMethods',
  Type.Object(
    {
      password: Type.Boolean(),
      magicLink: Type.Boolean(),
      emailCode: Type.Boolean(),
      sso: Type.Boolean(),
      passkey: Type.Boolean({ description: 'Passkeys as a first factor (docs/passkeys.md); default false' }),
    },
    { additionalProperties: false },
  ),
);
export type AuthMethods = Static<typeof AuthMethods>;

/** GET /v1/environment: what a frontend needs to know of the environment its publishable key names. */
export const Environment = define(
  'Environment',
  Type.Object({
    id: Type.String(),
    type: EnvironmentType,
    rateLimit: Type.Object({ requestsPerMinute: Type.Integer() }),
    authMethods: AuthMethods,
    signUp: Type.Boolean(),
    ssoConnections: Type.Array(
      Type.Object({
        id: Type.String(),
        name: Type.String(),
        type: Type.Union([Type.Literal('oidc'), Type.Literal('oauth2'), Type.Literal('saml')]),
        domains: Type.Array(Type.String()),
        provider: Type.String({ description: 'The preset (google, github, apple, gitlab, discord, linkedin, microsoft), else the type' }),
      }),
      {
        description:
          'SSO connections a sign-in page can draw buttons for (no secrets); empty while SSO is off. Those with no domains are social connections: one button each',
      },
    ),
    emailVerification: EmailVerification,
    mfa: MfaPolicy,
  }),
);
export type Environment = Static<typeof Environment>;

// ---- the platform API (operator)

/** An environment with all its settings, as the platform API shows it. */
export const PlatformEnvironment = define(
  'PlatformEnvironment',
  Type.Object({
    id: Type.String(),
    projectId: Type.String(),
    type: EnvironmentType,
    publishableKey: Type.String(),
    domain: Type.Union([Type.String(), Type.Null()]),
    callbackOrigins: Type.Array(Type.String()),
    authMethods: AuthMethods,
    signUp: Type.Boolean(),
    accessTokenTtlSeconds: Type.Integer(),
    tokenAlgorithm: TokenAlgorithm,
    rateLimitPerMinute: Type.Union([Type.Integer(), Type.Null()], { description: 'The override; null means the default.' }),
    rateLimit: Type.Object({ requestsPerMinute: Type.Integer({ description: 'The limit in force.' }) }),
    sessionLifetimeSeconds: Type.Integer(),
    sessionInactivitySeconds: Type.Integer(),
    usersCanCreateOrganizations: Type.Boolean({ description: 'Whether signed-in users may create organizations' }),
    emailVerification: EmailVerification,
    mfa: MfaPolicy,
    sessionClaims: Type.Union([Type.Record(Type.String(), Type.Unknown()), Type.Null()], {
      description: 'The custom claims template rendered into every access token; null for none',
    }),
  }),
);
export type PlatformEnvironment = Static<typeof PlatformEnvironment>;

export const Project = define(
  'Project',
  Type.Object({
    id: Type.String(),
    name: Type.String(),
    createdAt: Type.Integer(),
    logoUrl: Type.Union([Type.String(), Type.Null()], { description: 'Set with PUT /v1/platform/projects/{id}/logo.' }),
    environments: Type.Array(PlatformEnvironment),
  }),
);
export type Project = Static<typeof Project>;

export const ProjectPage = Page('ProjectPage', Project);
export type ProjectPage = Static<typeof ProjectPage>;

/** A new project, with each environment's secret key: shown once. */
export const CreatedProject = define(
  'CreatedProject',
  Type.Object({
    id: Type.String(),
    name: Type.String(),
    domain: Type.Union([Type.String(), Type.Null()]),
    createdAt: Type.Integer(),
    environments: Type.Array(
      Type.Object({
        id: Type.String(),
        type: EnvironmentType,
        publishableKey: Type.String(),
        secretKey: Type.String({ description: 'Shown once; only a hash is stored.' }),
      }),
    ),
  }),
);
export type CreatedProject = Static<typeof CreatedProject>;

export const SecretKey = define(
  'SecretKey',
  Type.Object({
    id: Type.String(),
    hint: Type.String({ description: 'The last four characters of the key.' }),
    createdAt: Type.Integer(),
    revokedAt: Type.Union([Type.Integer(), Type.Null()]),
  }),
);
export type SecretKey = Static<typeof SecretKey>;

export const SecretKeyList = List('SecretKeyList', SecretKey);
export type SecretKeyList = Static<typeof SecretKeyList>;

/** A new secret key: its value is shown only here. */
export const CreatedSecretKey = define(
  'CreatedSecretKey',
  Type.Object({ id: Type.String(), secretKey: Type.String(), hint: Type.String(), createdAt: Type.Integer() }),
);
export type CreatedSecretKey = Static<typeof CreatedSecretKey>;

export const ProjectUsage = define(
  'ProjectUsage',
  Type.Object({
    projectId: Type.String(),
    month: Type.String({ description: 'UTC calendar month, YYYY-MM' }),
    environments: Type.Array(
      Type.Object({
        id: Type.String(),
        type: EnvironmentType,
        monthlyActiveUsers: Type.Integer(),
        billable: Type.Boolean(),
      }),
    ),
    billableMonthlyActiveUsers: Type.Integer({ description: 'Monthly active users of the production environment only' }),
  }),
);
export type ProjectUsage = Static<typeof ProjectUsage>;
