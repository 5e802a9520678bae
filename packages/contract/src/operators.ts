import { Type, type Static } from 'typebox';
import { EnvironmentType } from './environments.js';
import { Page } from './lists.js';
import { define } from './registry.js';

/** What the console page reads before anyone signs in: public values only. */
export const ConsoleConfig = define(
  'ConsoleConfig',
  Type.Object({
    environmentId: Type.String({ description: "The operators' reserved environment" }),
    publishableKey: Type.String(),
    baseUrl: Type.String(),
  }),
);
export type ConsoleConfig = Static<typeof ConsoleConfig>;

/** An operator: a user of the reserved operators' environment. */
export const Operator = define(
  'Operator',
  Type.Object({
    id: Type.String(),
    email: Type.String(),
    firstName: Type.Union([Type.String(), Type.Null()]),
    lastName: Type.Union([Type.String(), Type.Null()]),
    createdAt: Type.Integer(),
  }),
);
export type Operator = Static<typeof Operator>;

/** Newest first, 20 by default and at most 100 a page: an instance may have more operators than one page. */
export const OperatorPage = Page('OperatorPage', Operator);
export type OperatorPage = Static<typeof OperatorPage>;

export const OperatorInvitation = define(
  'OperatorInvitation',
  Type.Object({
    id: Type.String(),
    email: Type.String(),
    url: Type.String({ description: 'The one-time link, also emailed; shown only here' }),
    expiresAt: Type.Integer(),
  }),
);
export type OperatorInvitation = Static<typeof OperatorInvitation>;

export const AuditLogEntry = define(
  'AuditLogEntry',
  Type.Object({
    id: Type.String(),
    at: Type.Integer(),
    actor: Type.Object({
      kind: Type.Union([
        Type.Literal('platform_key'),
        Type.Literal('operator'),
        Type.Literal('setup'),
        Type.Literal('secret_key', { description: 'id: the secret key (an actor token minted with it)' }),
        Type.Literal('actor', { description: "id: the actor's sub (an actor token redeemed)" }),
      ]),
      id: Type.Union([Type.String(), Type.Null()]),
      email: Type.Union([Type.String(), Type.Null()]),
    }),
    action: Type.String({ description: 'Method and route, e.g. "PATCH /v1/platform/environments/:environmentId"' }),
    target: Type.Union([Type.String(), Type.Null()], { description: 'The path as requested' }),
    status: Type.Integer(),
  }),
);
export type AuditLogEntry = Static<typeof AuditLogEntry>;

export const AuditLogPage = Page('AuditLogPage', AuditLogEntry);
export type AuditLogPage = Static<typeof AuditLogPage>;

/** Requests per minute over the last hour, per environment, as counted by this node. */
export const RequestRate = define(
  'RequestRate',
  Type.Object({
    projectId: Type.String(),
    environments: Type.Array(
      Type.Object({
        id: Type.String(),
        type: EnvironmentType,
        perMinute: Type.Array(Type.Object({ minute: Type.Integer({ description: 'Start of the minute, ms' }), requests: Type.Integer() })),
      }),
    ),
  }),
);
export type RequestRate = Static<typeof RequestRate>;

/** What this node has noticed about how it is deployed, for the console's settings page. */
export const InstanceStatus = define(
  'InstanceStatus',
  Type.Object({
    trustProxy: Type.Boolean({ description: 'Whether TRUST_PROXY names any proxy' }),
    proxyWarning: Type.Union(
      [
        Type.Object({
          peer: Type.String({ description: 'The private or loopback peer that sent X-Forwarded-For without being trusted' }),
          firstSeenAt: Type.Integer(),
          message: Type.String(),
        }),
        Type.Null(),
      ],
      { description: 'Set once this node saw X-Forwarded-For from an untrusted private or loopback peer (a proxy TRUST_PROXY does not name)' },
    ),
  }),
);
export type InstanceStatus = Static<typeof InstanceStatus>;
