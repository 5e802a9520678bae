/**
 * The routes the clients call: one table per credential, each route keyed `"METHOD /path/{param}"`
 * with its request body, its query and its answer. `@gatehouse/js` calls `SessionRoutes`, the
 * backend's admin client `SecretKeyRoutes`, the console `PlatformRoutes`; each through
 * `RouteCaller`, so a wrong body, a missing path parameter or a misread answer is a compile error.
 * The paths are filled by route-target.ts, the one piece of this that runs; the bodies and queries
 * the server's schemas hold themselves are in route-bodies.ts.
 *
 * Types only, written as plain TypeScript: the SDKs' declarations carry them as written
 * (scripts/inline-declarations.mjs). The server's test test/http/route-table.test.ts holds every
 * route here to the OpenAPI document: method, path, body and query fields, answer's shape.
 */
import type {
  ChangePasswordBody,
  ConsoleSetupBody,
  CreateProjectBody,
  CreateRoleBody,
  CreateSsoConnectionBody,
  CreateWebhookEndpointBody,
  EmailBody,
  EmailCodeVerifyBody,
  EmailLinkBody,
  EmailListQuery,
  HandoffBody,
  InviteOperatorBody,
  OrganizationListQuery,
  PageQuery,
  PasswordResetCompleteBody,
  RefreshBody,
  RotateSigningKeyBody,
  SsoStartBody,
  SwitchOrganizationBody,
  TokenBody,
  UpdateEnvironmentBody,
  UpdateProjectBody,
  UpdateWebhookEndpointBody,
  UploadTicketBody,
  UserListQuery,
  ApiKeyListQuery,
} from './route-bodies.js';
import type {
  ApiKeyList,
  ApiKeyPage,
  CreateApiKeyBody,
  CreateOwnApiKeyBody,
  CreatedApiKey,
  CreateMachineBody,
  MachineList,
  MachineWithSecret,
  VerifiedApiKey,
  VerifyApiKeyBody,
} from './api-keys.js';
import type { ActorToken, ActorTokenRedeemBody, CreateActorTokenBody } from './impersonation.js';
import type { AuditLogPage, ConsoleConfig, InstanceStatus, Operator, OperatorInvitation, OperatorPage, RequestRate } from './operators.js';
import type { UploadTicket, ProjectLogo } from './assets.js';
import type { CapturedEmailPage, EmailSent, OutboxEmailPage, PasswordReset } from './emails.js';
import type {
  CreatedProject,
  CreatedSecretKey,
  Environment,
  PlatformEnvironment,
  Project,
  ProjectPage,
  ProjectUsage,
  SecretKeyList,
} from './environments.js';
import type {
  AcceptInvitationBody,
  CreateCurrentDomainBody,
  CreateDomainBody,
  CreateInvitationBody,
  Invitation,
  InvitationAccepted,
  InvitationList,
  InvitationListQuery,
  InvitationPreview,
  InvitationPreviewBody,
  MembershipRequest,
  MembershipRequestList,
  OrganizationDomain,
  OrganizationDomainList,
  OrganizationSuggestion,
  OrganizationSuggestionList,
  UpdateDomainBody,
  UserInvitationList,
  VerifyDomainBody,
} from './invitations.js';
import type { Deleted } from './lists.js';
import type { AttemptBody, BackupCodes, MfaStatus, Reverified, ReverifyBody, SecondFactorBody, SecondFactorSignedIn, TotpEnabled, TotpSetup, TotpVerifyBody } from './mfa.js';
import type {
  Passkey,
  PasskeyCreateBody,
  PasskeyList,
  PasskeyOptionsAnswer,
  PasskeyRenameBody,
  PasskeySignInBody,
  PasskeySignInOptions,
  PasskeySignInOptionsBody,
} from './passkeys.js';
import type { SecondFactorNeeded } from './second-factor.js';
import type {
  AddCurrentMemberBody,
  AddMemberBody,
  CreateOrganizationBody,
  CreateUserOrganizationBody,
  Member,
  MemberPage,
  MemberRemoved,
  Organization,
  OrganizationPage,
  Role,
  RoleBody,
  RoleList,
  UpdateCurrentOrganizationBody,
  UpdateOrganizationBody,
  UserOrganization,
  UserOrganizationPage,
} from './organizations.js';
import type { HandoffRedirect, SessionList, SessionRefreshed, SigningKey, SigningKeyList } from './sessions.js';
import type {
  CompleteIdentityLinkParams,
  LinkIdentityParams,
  SsoConnection,
  SsoConnectionList,
  SsoStarted,
  UserIdentity,
  UserIdentityList,
} from './sso.js';
import type {
  CreateUserBody,
  ImportUsersBody,
  ImportUsersResult,
  Me,
  PasswordChanged,
  ProfileUpdateBody,
  SessionsRevoked,
  SessionUser,
  SignedIn,
  SignInBody,
  SignUpBody,
  SignUpStarted,
  SignUpVerifyBody,
  UpdateUserBody,
  UpdateUserMetadataBody,
  User,
  UserPage,
} from './users.js';
import type {
  CreatedWebhookEndpoint,
  WebhookDelivery,
  WebhookDeliveryPage,
  WebhookEndpoint,
  WebhookEndpointList,
  WebhookSecret,
} from './webhooks.js';

// ---- How a route is described and called.

/** One route: its body (absent: none), its query (absent: none) and its answer (`void`: 204). */
export interface RouteShape {
  body?: unknown;
  query?: object;
  response: unknown;
}

/** The `{name}` segments of a route's path. */
export type RouteParamNames<K extends string> = K extends `${string}{${infer Name}}${infer Rest}` ? Name | RouteParamNames<Rest> : never;

/** The parameters of a route's path, by name. */
export type RouteParams<K extends string> = { [Name in RouteParamNames<K>]: string };

/** What a call of route `K` passes: the path's parameters, the body (if any), the query (if any). */
export type RouteInput<R extends RouteShape, K extends string> = ([RouteParamNames<K>] extends [never]
  ? { params?: never }
  : { params: RouteParams<K> }) &
  (R extends { body: infer Body } ? { body: Body } : R extends { body?: infer Body } ? { body?: Body } : { body?: never }) &
  (R extends { query: infer Query } ? { query?: Query } : { query?: never });

/** The input argument of route `K`: optional when the route needs nothing. */
export type RouteArgs<R extends RouteShape, K extends string> =
  {} extends RouteInput<R, K> ? [input?: RouteInput<R, K>] : [input: RouteInput<R, K>];

/** A client's typed call of the routes of table `T`. */
export type RouteCaller<T> = <K extends keyof T & string>(
  route: K,
  ...input: T[K] extends RouteShape ? RouteArgs<T[K], K> : never
) => Promise<T[K] extends RouteShape ? T[K]['response'] : never>;

// ---- The tables.

/** Publishable key and the user's access token: `@gatehouse/js`, and the hosted pages. */
export interface SessionRoutes {
  'GET /v1/environment': { response: Environment };
  'POST /v1/auth/signup': { body: SignUpBody; response: SignedIn | SignUpStarted };
  'POST /v1/auth/signup/verify': { body: SignUpVerifyBody; response: SignedIn | SecondFactorNeeded };
  'POST /v1/auth/signin': { body: SignInBody; response: SignedIn | SecondFactorNeeded };
  'POST /v1/auth/signin/second-factor': { body: SecondFactorBody; response: SecondFactorSignedIn };
  'POST /v1/auth/signin/second-factor/totp-setup': { body: AttemptBody; response: TotpSetup };
  'POST /v1/auth/signin/second-factor/passkey-setup': { body: AttemptBody; response: PasskeyOptionsAnswer };
  'POST /v1/auth/email-code': { body: EmailBody; response: EmailSent };
  'POST /v1/auth/email-code/verify': { body: EmailCodeVerifyBody; response: SignedIn | SecondFactorNeeded };
  'POST /v1/auth/magic-link': { body: EmailLinkBody; response: EmailSent };
  'POST /v1/auth/magic-link/verify': { body: TokenBody; response: SignedIn | SecondFactorNeeded };
  'POST /v1/auth/sso/start': { body: SsoStartBody; response: SsoStarted };
  'POST /v1/auth/sso/verify': { body: TokenBody; response: SignedIn | SecondFactorNeeded };
  'POST /v1/auth/handoff': { body: TokenBody; response: SignedIn };
  'POST /v1/auth/actor-token': { body: ActorTokenRedeemBody; response: SignedIn };
  'POST /v1/auth/invitations/accept': { body: AcceptInvitationBody; response: InvitationAccepted | SecondFactorNeeded };
  'POST /v1/auth/invitations/preview': { body: InvitationPreviewBody; response: InvitationPreview };
  'POST /v1/auth/password-reset': { body: EmailLinkBody; response: EmailSent };
  'POST /v1/auth/password-reset/complete': { body: PasswordResetCompleteBody; response: PasswordReset };
  'POST /v1/auth/refresh': { body: RefreshBody; response: SessionRefreshed };
  'POST /v1/auth/switch-organization': { body: SwitchOrganizationBody; response: SessionRefreshed };
  'POST /v1/auth/signout': { body: RefreshBody; response: void };
  'GET /v1/me': { response: Me };
  'PATCH /v1/me': { body: ProfileUpdateBody; response: SessionUser };
  'POST /v1/me/password': { body: ChangePasswordBody; response: PasswordChanged };
  'POST /v1/me/assets/upload-url': { body: UploadTicketBody; response: UploadTicket };
  'POST /v1/me/handoff': { body: HandoffBody; response: HandoffRedirect };
  'GET /v1/me/sessions': { response: SessionList };
  'DELETE /v1/me/sessions/{sessionId}': { response: void };
  'GET /v1/me/mfa': { response: MfaStatus };
  'POST /v1/me/mfa/totp': { response: TotpSetup };
  'POST /v1/me/mfa/totp/verify': { body: TotpVerifyBody; response: TotpEnabled };
  'DELETE /v1/me/mfa/totp': { response: void };
  'POST /v1/me/mfa/backup-codes': { response: BackupCodes };
  'POST /v1/me/reverify': { body: ReverifyBody; response: Reverified };
  'POST /v1/me/reverify/passkey-options': { response: PasskeyOptionsAnswer };
  'GET /v1/me/api-keys': { response: ApiKeyList };
  'POST /v1/me/api-keys': { body: CreateOwnApiKeyBody; response: CreatedApiKey };
  'DELETE /v1/me/api-keys/{keyId}': { response: Deleted };
  'GET /v1/me/identities': { response: UserIdentityList };
  'POST /v1/me/identities': { body: LinkIdentityParams; response: SsoStarted };
  'POST /v1/me/identities/complete': { body: CompleteIdentityLinkParams; response: UserIdentity };
  'DELETE /v1/me/identities/{identityId}': { response: void };
  'GET /v1/me/invitations': { response: UserInvitationList };
  'POST /v1/me/invitations/{invitationId}/accept': { response: Member };
  'GET /v1/me/organization-suggestions': { response: OrganizationSuggestionList };
  'POST /v1/me/organization-suggestions/{suggestionId}/accept': { response: OrganizationSuggestion };
  'GET /v1/me/organizations': { query: PageQuery; response: UserOrganizationPage };
  'POST /v1/me/organizations': { body: CreateUserOrganizationBody; response: UserOrganization };
  'GET /v1/me/organization': { response: UserOrganization };
  'PATCH /v1/me/organization': { body: UpdateCurrentOrganizationBody; response: UserOrganization };
  'GET /v1/me/organization/members': { query: PageQuery; response: MemberPage };
  'POST /v1/me/organization/members': { body: AddCurrentMemberBody; response: Member };
  'GET /v1/me/organization/members/{userId}': { response: Member };
  'PATCH /v1/me/organization/members/{userId}': { body: RoleBody; response: Member };
  'DELETE /v1/me/organization/members/{userId}': { response: MemberRemoved };
  'GET /v1/me/organization/invitations': { query: InvitationListQuery; response: InvitationList };
  'POST /v1/me/organization/invitations': { body: CreateInvitationBody; response: Invitation };
  'POST /v1/me/organization/invitations/{invitationId}/revoke': { response: Invitation };
  'GET /v1/me/organization/domains': { response: OrganizationDomainList };
  'POST /v1/me/organization/domains': { body: CreateCurrentDomainBody; response: OrganizationDomain };
  'POST /v1/me/organization/domains/{domainId}/verify': { body: VerifyDomainBody; response: OrganizationDomain };
  'PATCH /v1/me/organization/domains/{domainId}': { body: UpdateDomainBody; response: OrganizationDomain };
  'DELETE /v1/me/organization/domains/{domainId}': { response: Deleted };
  'GET /v1/me/organization/membership-requests': { response: MembershipRequestList };
  'POST /v1/me/organization/membership-requests/{requestId}/accept': { response: MembershipRequest };
  'POST /v1/me/organization/membership-requests/{requestId}/reject': { response: MembershipRequest };
  'GET /v1/me/organization/api-keys': { response: ApiKeyList };
  'POST /v1/me/organization/api-keys': { body: CreateOwnApiKeyBody; response: CreatedApiKey };
  'DELETE /v1/me/organization/api-keys/{keyId}': { response: Deleted };
  'POST /v1/auth/passkey/options': { body: PasskeySignInOptionsBody; response: PasskeySignInOptions };
  'POST /v1/auth/passkey/verify': { body: PasskeySignInBody; response: SignedIn };
  'POST /v1/me/passkeys/registration': { response: PasskeyOptionsAnswer };
  'POST /v1/me/passkeys': { body: PasskeyCreateBody; response: Passkey };
  'GET /v1/me/passkeys': { response: PasskeyList };
  'PATCH /v1/me/passkeys/{passkeyId}': { body: PasskeyRenameBody; response: Passkey };
  'DELETE /v1/me/passkeys/{passkeyId}': { response: Deleted };
}

/** The secret key: `@gatehouse/backend`'s admin client. */
export interface SecretKeyRoutes {
  'GET /v1/users': { query: UserListQuery; response: UserPage };
  'POST /v1/users': { body: CreateUserBody; response: User };
  'POST /v1/users/import': { body: ImportUsersBody; response: ImportUsersResult };
  'GET /v1/users/{userId}': { response: User };
  'PATCH /v1/users/{userId}': { body: UpdateUserBody; response: User };
  'DELETE /v1/users/{userId}': { response: Deleted };
  'PATCH /v1/users/{userId}/metadata': { body: UpdateUserMetadataBody; response: User };
  'GET /v1/users/{userId}/sessions': { response: SessionList };
  'DELETE /v1/users/{userId}/sessions/{sessionId}': { response: void };
  'POST /v1/users/{userId}/sessions/revoke': { response: SessionsRevoked };
  'GET /v1/users/{userId}/identities': { response: UserIdentityList };
  'DELETE /v1/users/{userId}/identities/{identityId}': { response: void };
  'GET /v1/users/{userId}/passkeys': { response: PasskeyList };
  'DELETE /v1/users/{userId}/passkeys/{passkeyId}': { response: Deleted };
  'POST /v1/users/{userId}/ban': { response: User };
  'POST /v1/users/{userId}/unban': { response: User };
  'GET /v1/organizations': { query: OrganizationListQuery; response: OrganizationPage };
  'POST /v1/organizations': { body: CreateOrganizationBody; response: Organization };
  'GET /v1/organizations/{organizationId}': { response: Organization };
  'PATCH /v1/organizations/{organizationId}': { body: UpdateOrganizationBody; response: Organization };
  'DELETE /v1/organizations/{organizationId}': { response: Deleted };
  'GET /v1/organizations/{organizationId}/members': { query: PageQuery; response: MemberPage };
  'POST /v1/organizations/{organizationId}/members': { body: AddMemberBody; response: Member };
  'GET /v1/organizations/{organizationId}/members/{userId}': { response: Member };
  'PATCH /v1/organizations/{organizationId}/members/{userId}': { body: RoleBody; response: Member };
  'DELETE /v1/organizations/{organizationId}/members/{userId}': { response: MemberRemoved };
  'GET /v1/organizations/{organizationId}/invitations': { query: InvitationListQuery; response: InvitationList };
  'POST /v1/organizations/{organizationId}/invitations': { body: CreateInvitationBody; response: Invitation };
  'POST /v1/organizations/{organizationId}/invitations/{invitationId}/revoke': { response: Invitation };
  'GET /v1/organizations/{organizationId}/domains': { response: OrganizationDomainList };
  'POST /v1/organizations/{organizationId}/domains': { body: CreateDomainBody; response: OrganizationDomain };
  'PATCH /v1/organizations/{organizationId}/domains/{domainId}': { body: UpdateDomainBody; response: OrganizationDomain };
  'DELETE /v1/organizations/{organizationId}/domains/{domainId}': { response: Deleted };
  'GET /v1/dev/emails': { query: EmailListQuery; response: CapturedEmailPage };
  'POST /v1/api-keys': { body: CreateApiKeyBody; response: CreatedApiKey };
  'GET /v1/api-keys': { query: ApiKeyListQuery; response: ApiKeyPage };
  'DELETE /v1/api-keys/{keyId}': { response: Deleted };
  'POST /v1/api-keys/verify': { body: VerifyApiKeyBody; response: VerifiedApiKey };
  'POST /v1/machines': { body: CreateMachineBody; response: MachineWithSecret };
  'GET /v1/machines': { response: MachineList };
  'DELETE /v1/machines/{machineId}': { response: Deleted };
  'POST /v1/machines/{machineId}/secret': { response: MachineWithSecret };
  'POST /v1/actor-tokens': { body: CreateActorTokenBody; response: ActorToken };
  'GET /v1/users/{userId}/mfa': { response: MfaStatus };
  'DELETE /v1/users/{userId}/mfa': { response: User };
}

/**
 * Every secret-key route again under `/v1/platform/environments/{environmentId}`, for the operator:
 * `GET /v1/users/{userId}` is `GET /v1/platform/environments/{environmentId}/users/{userId}`.
 */
export type EnvironmentRoutes = {
  [
    K in keyof SecretKeyRoutes as K extends `${infer Method} /v1/${infer Rest}`
      ? `${Method} /v1/platform/environments/{environmentId}/${Rest}`
      : never
  ]: SecretKeyRoutes[K];
};

/** The operator's access token (or the platform key): the console. Its own routes, and EnvironmentRoutes. */
export type PlatformRoutes = OperatorRoutes & EnvironmentRoutes;

/** The routes of the platform API and the console's own, besides EnvironmentRoutes. */
export interface OperatorRoutes {
  'GET /v1/console/config': { response: ConsoleConfig };
  'POST /v1/console/setup': { body: ConsoleSetupBody; response: Operator };
  'GET /v1/platform/instance': { response: InstanceStatus };
  'GET /v1/platform/projects': { query: PageQuery; response: ProjectPage };
  'POST /v1/platform/projects': { body: CreateProjectBody; response: CreatedProject };
  'GET /v1/platform/projects/{projectId}': { response: Project };
  'PATCH /v1/platform/projects/{projectId}': { body: UpdateProjectBody; response: Project };
  'DELETE /v1/platform/projects/{projectId}': { response: void };
  'PUT /v1/platform/projects/{projectId}/logo': { body: Blob; response: ProjectLogo };
  'DELETE /v1/platform/projects/{projectId}/logo': { response: void };
  'GET /v1/platform/projects/{projectId}/usage': { query: { month?: string | undefined }; response: ProjectUsage };
  'GET /v1/platform/projects/{projectId}/requests': { response: RequestRate };
  'PATCH /v1/platform/environments/{environmentId}': { body: UpdateEnvironmentBody; response: PlatformEnvironment };
  'GET /v1/platform/environments/{environmentId}/secret-keys': { response: SecretKeyList };
  'POST /v1/platform/environments/{environmentId}/secret-keys': { response: CreatedSecretKey };
  'DELETE /v1/platform/environments/{environmentId}/secret-keys/{keyId}': { response: void };
  'GET /v1/platform/environments/{environmentId}/signing-keys': { response: SigningKeyList };
  'POST /v1/platform/environments/{environmentId}/signing-keys/rotate': { body?: RotateSigningKeyBody; response: SigningKey };
  'POST /v1/platform/environments/{environmentId}/signing-keys/{kid}/revoke': { response: SigningKey };
  'GET /v1/platform/environments/{environmentId}/roles': { response: RoleList };
  'POST /v1/platform/environments/{environmentId}/roles': { body: CreateRoleBody; response: Role };
  'DELETE /v1/platform/environments/{environmentId}/roles/{roleKey}': { response: void };
  'GET /v1/platform/environments/{environmentId}/emails': { query: EmailListQuery; response: OutboxEmailPage };
  'GET /v1/platform/environments/{environmentId}/webhook-endpoints': { response: WebhookEndpointList };
  'POST /v1/platform/environments/{environmentId}/webhook-endpoints': { body: CreateWebhookEndpointBody; response: CreatedWebhookEndpoint };
  'GET /v1/platform/environments/{environmentId}/webhook-endpoints/{endpointId}': { response: WebhookEndpoint };
  'PATCH /v1/platform/environments/{environmentId}/webhook-endpoints/{endpointId}': {
    body: UpdateWebhookEndpointBody;
    response: WebhookEndpoint;
  };
  'DELETE /v1/platform/environments/{environmentId}/webhook-endpoints/{endpointId}': { response: Deleted };
  'POST /v1/platform/environments/{environmentId}/webhook-endpoints/{endpointId}/rotate-secret': { response: WebhookSecret };
  'GET /v1/platform/environments/{environmentId}/webhook-endpoints/{endpointId}/deliveries': {
    query: PageQuery;
    response: WebhookDeliveryPage;
  };
  'POST /v1/platform/environments/{environmentId}/webhook-endpoints/{endpointId}/deliveries/{deliveryId}/retry': {
    response: WebhookDelivery;
  };
  'GET /v1/platform/environments/{environmentId}/sso-connections': { response: SsoConnectionList };
  'POST /v1/platform/environments/{environmentId}/sso-connections': { body: CreateSsoConnectionBody; response: SsoConnection };
  'DELETE /v1/platform/environments/{environmentId}/sso-connections/{connectionId}': { response: Deleted };
  'GET /v1/platform/operators': { query: PageQuery; response: OperatorPage };
  'POST /v1/platform/operators/invitations': { body: InviteOperatorBody; response: OperatorInvitation };
  'DELETE /v1/platform/operators/{userId}': { response: void };
  'GET /v1/platform/audit-log': { query: PageQuery; response: AuditLogPage };
}

/** Every route of the tables. */
export type Routes = SessionRoutes & SecretKeyRoutes & PlatformRoutes;
