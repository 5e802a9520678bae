/**
 * The resources and request bodies of the publishable-key and session API: the contract's own types
 * (@gatehouse/contract), which the server's route schemas are made of. Nothing here is written by
 * hand, so a change of a server schema is a type error in this SDK until it follows.
 */
import type { Environment, MemberPage, SessionUser } from '@gatehouse/contract';

export type {
  AcceptInvitationBody,
  AddCurrentMemberBody,
  AuthUser,
  CreateCurrentDomainBody,
  CreateInvitationBody,
  EnrollmentMode,
  Invitation,
  InvitationAccepted,
  InvitationPreview,
  InvitationStatus,
  MembershipRequest,
  OrganizationDomain,
  OrganizationSuggestion,
  UserInvitation,
  CreateUserOrganizationBody,
  Member,
  MemberRemoved,
  OrganizationSummary,
  PasswordChanged,
  PasswordReset,
  SessionRefreshed,
  SessionTokens,
  SignedIn,
  SignInBody,
  UpdateCurrentOrganizationBody,
  UploadPurpose,
  UploadTicket,
  SessionUser,
  UserOrganization,
  UserIdentity,
  LinkIdentityParams,
  ApiKey,
  CreatedApiKey,
  CreateOwnApiKeyBody,
  Deleted,
  BackupCodes,
  MfaStatus,
  Reverified,
  ReverifyBody,
  TotpEnabled,
  TotpSetup,
  Passkey,
  PasskeyResponse,
} from '@gatehouse/contract';

/** GET /v1/me/sessions: one live session (never a token). */
export type { Session as SessionView } from '@gatehouse/contract';

/** GET /v1/environment */
export type EnvironmentInfo = Environment;

/** One page of a list. `nextCursor` is null on the last page. */
export type Page<T> = { data: T[]; nextCursor: MemberPage['nextCursor'] };

/** The signed-in user, as they see themselves (GET /v1/me): the contract's SessionUser, without privateMetadata. */
export type User = SessionUser;
