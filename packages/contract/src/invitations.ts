import { Type, type Static } from 'typebox';
import { EMAIL_MAX_LENGTH, Nullable, Password, RoleName } from './fields.js';
import { List } from './lists.js';
import { define } from './registry.js';
import { SessionTokens } from './sessions.js';
import { AuthUser } from './users.js';

// The invitation shapes, as the SDKs' admin clients already call them; the server's invitation
// routes (organization invitations) answer with these when they land.

export const InvitationStatus = Type.Union([
  Type.Literal('pending'),
  Type.Literal('accepted'),
  Type.Literal('revoked'),
  Type.Literal('expired'),
]);
export type InvitationStatus = Static<typeof InvitationStatus>;

export const Invitation = define(
  'Invitation',
  Type.Object({
    id: Type.String({ description: 'orginv_…' }),
    organizationId: Type.String(),
    email: Type.String(),
    role: Type.String(),
    status: InvitationStatus,
    expiresAt: Type.Integer(),
    createdAt: Type.Integer(),
  }),
);
export type Invitation = Static<typeof Invitation>;

export const InvitationList = List('InvitationList', Invitation);
export type InvitationList = Static<typeof InvitationList>;

/** POST /v1/organizations/{organizationId}/invitations */
export const CreateInvitationBody = Type.Object(
  {
    email: Type.String({ minLength: 1, maxLength: EMAIL_MAX_LENGTH + 64 }),
    role: RoleName,
    redirectUrl: Type.Optional(
      Type.String({ minLength: 1, maxLength: 2048, description: 'Where the emailed link leads; it gets a `token` query parameter' }),
    ),
    expiresInDays: Type.Optional(Type.Integer({ minimum: 1, maximum: 30, description: 'Default 7, at most 30' })),
  },
  { additionalProperties: false },
);
export type CreateInvitationBody = Static<typeof CreateInvitationBody>;

/** GET /v1/organizations/{organizationId}/invitations and GET /v1/me/organization/invitations */
export const InvitationListQuery = Type.Object({ status: Type.Optional(InvitationStatus) }, { additionalProperties: false });
export type InvitationListQuery = Static<typeof InvitationListQuery>;

/** POST /v1/me/organization/invitations: the same as the secret-key body. */
export const CreateCurrentInvitationBody = CreateInvitationBody;

/** The organization an invitation or a suggestion leads to, as much as its invitee may see. */
const OrganizationBrief = Type.Object({ id: Type.String(), name: Type.String(), slug: Type.String(), imageUrl: Nullable(Type.String()) });

/** An invitation addressed to the signed-in user, with the organization it leads to. */
export const UserInvitation = define(
  'UserInvitation',
  Type.Object({
    id: Type.String(),
    organizationId: Type.String(),
    email: Type.String(),
    role: Type.String(),
    status: InvitationStatus,
    expiresAt: Type.Integer(),
    createdAt: Type.Integer(),
    organization: OrganizationBrief,
  }),
);
export type UserInvitation = Static<typeof UserInvitation>;

export const UserInvitationList = List('UserInvitationList', UserInvitation);
export type UserInvitationList = Static<typeof UserInvitationList>;

/** POST /v1/auth/invitations/accept: the token from the emailed link. */
export const AcceptInvitationBody = Type.Object(
  {
    token: Type.String({ minLength: 1, maxLength: 512 }),
    password: Type.Optional(Password),
    firstName: Type.Optional(Type.String({ minLength: 1, maxLength: 100, pattern: '^[^\\u0000-\\u001f\\u007f]*$' })),
    lastName: Type.Optional(Type.String({ minLength: 1, maxLength: 100, pattern: '^[^\\u0000-\\u001f\\u007f]*$' })),
  },
  { additionalProperties: false },
);
export type AcceptInvitationBody = Static<typeof AcceptInvitationBody>;

/** POST /v1/auth/invitations/preview: the token of the emailed link, read before accepting. */
export const InvitationPreviewBody = Type.Object({ token: Type.String({ minLength: 1, maxLength: 512 }) }, { additionalProperties: false });
export type InvitationPreviewBody = Static<typeof InvitationPreviewBody>;

/** What the accept page shows before accepting: whom the link is for, masked, and where it leads. */
export const InvitationPreview = define(
  'InvitationPreview',
  Type.Object({
    organization: Type.Object({ id: Type.String(), name: Type.String(), imageUrl: Nullable(Type.String()) }),
    email: Type.String({ description: 'The invited address, masked: a***@example.com' }),
    role: Type.String(),
    expiresAt: Type.Integer(),
  }),
);
export type InvitationPreview = Static<typeof InvitationPreview>;

/** POST /v1/auth/invitations/accept: signed in, and the organization joined. */
export const InvitationAccepted = define(
  'InvitationAccepted',
  Type.Object({ user: AuthUser, session: SessionTokens, organizationId: Type.String({ description: 'The organization joined' }) }),
);
export type InvitationAccepted = Static<typeof InvitationAccepted>;

// ---- verified domains and membership requests

export const EnrollmentMode = Type.Union([
  Type.Literal('manual_invitation'),
  Type.Literal('automatic_invitation'),
  Type.Literal('automatic_suggestion'),
]);
export type EnrollmentMode = Static<typeof EnrollmentMode>;

export const OrganizationDomain = define(
  'OrganizationDomain',
  Type.Object({
    id: Type.String({ description: 'orgdom_…' }),
    organizationId: Type.String(),
    name: Type.String(),
    enrollmentMode: EnrollmentMode,
    verified: Type.Boolean(),
    createdAt: Type.Integer(),
    updatedAt: Type.Integer(),
  }),
);
export type OrganizationDomain = Static<typeof OrganizationDomain>;

export const OrganizationDomainList = List('OrganizationDomainList', OrganizationDomain);
export type OrganizationDomainList = Static<typeof OrganizationDomainList>;

const DomainName = Type.String({ minLength: 3, maxLength: 253, description: 'A DNS name such as example.com' });

/** POST /v1/organizations/{organizationId}/domains: verified at once (the operator vouches). */
export const CreateDomainBody = Type.Object({ name: DomainName, enrollmentMode: EnrollmentMode }, { additionalProperties: false });
export type CreateDomainBody = Static<typeof CreateDomainBody>;

/** POST /v1/me/organization/domains: verified by a code emailed to `email`, an address at the domain. */
export const CreateCurrentDomainBody = Type.Object(
  { name: DomainName, enrollmentMode: EnrollmentMode, email: Type.String({ minLength: 1, maxLength: EMAIL_MAX_LENGTH + 64 }) },
  { additionalProperties: false },
);
export type CreateCurrentDomainBody = Static<typeof CreateCurrentDomainBody>;

/** PATCH of a domain: its enrolment mode. */
export const UpdateDomainBody = Type.Object({ enrollmentMode: EnrollmentMode }, { additionalProperties: false });
export type UpdateDomainBody = Static<typeof UpdateDomainBody>;

export const VerifyDomainBody = Type.Object({ code: Type.String({ minLength: 1, maxLength: 32 }) }, { additionalProperties: false });
export type VerifyDomainBody = Static<typeof VerifyDomainBody>;

/** An organization a verified domain suggests to the signed-in user. */
export const OrganizationSuggestion = define(
  'OrganizationSuggestion',
  Type.Object({
    id: Type.String({ description: 'orgreq_…: the same id becomes the membership request when accepted' }),
    status: Type.Union([Type.Literal('suggested'), Type.Literal('pending')]),
    organization: OrganizationBrief,
    createdAt: Type.Integer(),
  }),
);
export type OrganizationSuggestion = Static<typeof OrganizationSuggestion>;

export const OrganizationSuggestionList = List('OrganizationSuggestionList', OrganizationSuggestion);
export type OrganizationSuggestionList = Static<typeof OrganizationSuggestionList>;

export const MembershipRequest = define(
  'MembershipRequest',
  Type.Object({
    id: Type.String({ description: 'orgreq_…' }),
    organizationId: Type.String(),
    userId: Type.String(),
    email: Type.String(),
    status: Type.Union([Type.Literal('pending'), Type.Literal('accepted'), Type.Literal('rejected')]),
    createdAt: Type.Integer(),
    updatedAt: Type.Integer(),
  }),
);
export type MembershipRequest = Static<typeof MembershipRequest>;

export const MembershipRequestList = List('MembershipRequestList', MembershipRequest);
export type MembershipRequestList = Static<typeof MembershipRequestList>;
