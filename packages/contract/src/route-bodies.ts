/**
 * The queries and request bodies of the route tables (routes.ts) that the server's route schemas
 * hold themselves rather than the contract's schemas. Plain TypeScript, copied as written into the
 * SDKs' declarations; test/http/route-table.test.ts of the server holds each to its route's schema.
 */
import type { AuthMethods, PlatformEnvironment } from './environments.js';
import type { UploadPurpose } from './assets.js';
import type { OidcPreset } from './sso.js';
import type { WebhookEventType } from './webhooks.js';

/** A cursor-paged listing's query: at most 100 rows a page; `cursor` is the last page's `nextCursor`. */
export interface PageQuery {
  limit?: number | undefined;
  cursor?: string | undefined;
}
export interface UserListQuery extends PageQuery {
  email?: string | undefined;
  query?: string | undefined;
  externalId?: string | undefined;
}
export interface ApiKeyListQuery extends PageQuery {
  subject?: string | undefined;
}
export interface OrganizationListQuery extends PageQuery {
  query?: string | undefined;
}
/** The emails listings, newest first, to one recipient if `to` is given. */
export interface EmailListQuery extends PageQuery {
  to?: string | undefined;
}
export interface RefreshBody {
  refreshToken: string;
}
export interface SwitchOrganizationBody extends RefreshBody {
  organizationId: string | null;
}
export interface EmailBody {
  email: string;
}
export interface EmailCodeVerifyBody extends EmailBody {
  code: string;
}
/** A magic link or a password reset: the emailed link leads to `redirectUrl` with a `token`. */
export interface EmailLinkBody extends EmailBody {
  redirectUrl: string;
}
export interface TokenBody {
  token: string;
}
export interface PasswordResetCompleteBody extends TokenBody {
  newPassword: string;
}
export interface SsoStartBody {
  email?: string;
  connectionId?: string;
  redirectUrl: string;
}
export interface ChangePasswordBody {
  currentPassword?: string;
  newPassword: string;
}
/** An image's facts, computed in the browser; the server checks the bytes against them. */
export interface UploadTicketBody {
  purpose: UploadPurpose;
  contentType: string;
  contentLength: number;
  sha256: string;
  width: number;
  height: number;
}
export interface CreateProjectBody {
  name: string;
  domain?: string | null;
}
export interface UpdateProjectBody {
  name?: string;
  domain?: string | null;
}
/** PATCH /v1/platform/environments/{environmentId}: the settings as PlatformEnvironment shows them; omitted ones are unchanged. */
export type UpdateEnvironmentBody = Partial<
  Omit<PlatformEnvironment, 'id' | 'projectId' | 'type' | 'publishableKey' | 'rateLimit' | 'authMethods'>
> & {
  authMethods?: Partial<AuthMethods>;
};
export interface RotateSigningKeyBody {
  immediate?: boolean;
}
export interface CreateRoleBody {
  key: string;
  name: string;
  description?: string | null;
  permissions: string[];
}
export interface CreateWebhookEndpointBody {
  url: string;
  eventTypes?: WebhookEventType[] | null;
  description?: string | null;
}
export interface UpdateWebhookEndpointBody {
  url?: string;
  eventTypes?: WebhookEventType[] | null;
  enabled?: boolean;
  description?: string | null;
}
export type CreateSsoConnectionBody =
  | { type: 'saml'; name: string; domains: string[]; idpMetadataXml: string }
  | {
      type: 'oidc';
      preset?: Exclude<OidcPreset, 'apple'>;
      name: string;
      domains: string[];
      issuer?: string;
      clientId: string;
      clientSecret: string;
    }
  | { type: 'oidc'; preset: 'apple'; name: string; domains: string[]; clientId: string; teamId: string; keyId: string; privateKey: string };
export interface InviteOperatorBody {
  email: string;
}
export interface ConsoleSetupBody {
  token: string;
  email?: string;
  password: string;
  firstName?: string;
  lastName?: string;
}
export interface HandoffBody {
  redirectUrl: string;
}
