import { Type, type Static } from 'typebox';
import { List, Page } from './lists.js';
import { define } from './registry.js';

/**
 * API keys (`ak_…`, secrets `gh_ak_…`) of users and organizations, and machines (`mch_…`, secrets
 * `gh_mch_…`) that get tokens with OAuth 2.0 client credentials (docs/api-keys.md).
 */

const Scopes = Type.Array(Type.String({ minLength: 1, maxLength: 128 }), {
  maxItems: 50,
  description: 'Lowercase names joined by ":" (1 to 4 parts), such as "invoices:read" or "org:billing:manage"',
});

export const ApiKey = define(
  'ApiKey',
  Type.Object({
    id: Type.String({ description: 'ak_…' }),
    name: Type.String(),
    subject: Type.String({ description: 'The user (user_…) or organization (org_…) the key acts for' }),
    scopes: Type.Array(Type.String()),
    createdAt: Type.Integer(),
    expiresAt: Type.Union([Type.Integer(), Type.Null()], { description: 'null: never expires' }),
    lastUsedAt: Type.Union([Type.Integer(), Type.Null()], { description: 'Last verification, to the minute; null before any' }),
  }),
);
export type ApiKey = Static<typeof ApiKey>;

export const CreatedApiKey = define(
  'CreatedApiKey',
  Type.Object({
    apiKey: ApiKey,
    secret: Type.String({ description: 'gh_ak_…: shown in this answer only; Gatehouse keeps a hash' }),
  }),
);
export type CreatedApiKey = Static<typeof CreatedApiKey>;

export const ApiKeyList = List('ApiKeyList', ApiKey);
export type ApiKeyList = Static<typeof ApiKeyList>;

export const ApiKeyPage = Page('ApiKeyPage', ApiKey);
export type ApiKeyPage = Static<typeof ApiKeyPage>;

const keyFields = {
  name: Type.String({ minLength: 1, maxLength: 100 }),
  scopes: Type.Optional(Scopes),
  expiresInSeconds: Type.Optional(
    Type.Integer({ minimum: 60, maximum: 10 * 365 * 24 * 3600, description: 'Omit for a key that never expires' }),
  ),
};

/** The session surface: the subject is the caller (or their current organization), never the body. */
export const CreateOwnApiKeyBody = Type.Object(keyFields, { additionalProperties: false });
export type CreateOwnApiKeyBody = Static<typeof CreateOwnApiKeyBody>;

export const CreateApiKeyBody = Type.Object(
  { subject: Type.String({ minLength: 1, maxLength: 128, description: 'user_… or org_…' }), ...keyFields },
  { additionalProperties: false },
);
export type CreateApiKeyBody = Static<typeof CreateApiKeyBody>;

export const VerifyApiKeyBody = Type.Object({ secret: Type.String({ minLength: 1, maxLength: 256 }) }, { additionalProperties: false });
export type VerifyApiKeyBody = Static<typeof VerifyApiKeyBody>;

export const VerifiedApiKey = define(
  'VerifiedApiKey',
  Type.Object({
    id: Type.String({ description: 'ak_…' }),
    subject: Type.String({ description: 'user_… or org_…' }),
    scopes: Type.Array(Type.String()),
    expiresAt: Type.Union([Type.Integer(), Type.Null()]),
  }),
);
export type VerifiedApiKey = Static<typeof VerifiedApiKey>;

export const Machine = define(
  'Machine',
  Type.Object({
    id: Type.String({ description: 'mch_…: the OAuth client_id' }),
    name: Type.String(),
    scopes: Type.Array(Type.String()),
    createdAt: Type.Integer(),
  }),
);
export type Machine = Static<typeof Machine>;

export const MachineWithSecret = define(
  'MachineWithSecret',
  Type.Object({
    machine: Machine,
    clientSecret: Type.String({ description: 'gh_mch_…: shown in this answer only; Gatehouse keeps a hash' }),
  }),
);
export type MachineWithSecret = Static<typeof MachineWithSecret>;

export const MachineList = List('MachineList', Machine);
export type MachineList = Static<typeof MachineList>;

export const CreateMachineBody = Type.Object(
  { name: Type.String({ minLength: 1, maxLength: 100 }), scopes: Type.Optional(Scopes) },
  { additionalProperties: false },
);
export type CreateMachineBody = Static<typeof CreateMachineBody>;

/** RFC 6749 §4.4 / §5.1. */
export const MachineToken = define(
  'MachineToken',
  Type.Object({
    access_token: Type.String({ description: 'A JWT with header typ "m2m+jwt"; sub is the machine id' }),
    token_type: Type.Literal('Bearer'),
    expires_in: Type.Integer(),
    scope: Type.String({ description: 'The granted scopes, space-separated' }),
  }),
);
export type MachineToken = Static<typeof MachineToken>;
