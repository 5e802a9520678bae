import { Type, type Static } from 'typebox';
import { EMAIL_MAX_LENGTH, RoleName } from './fields.js';
import { List } from './lists.js';
import { define } from './registry.js';

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
    expiresInDays: Type.Optional(Type.Integer({ minimum: 1, description: 'Default 7' })),
  },
  { additionalProperties: false },
);
export type CreateInvitationBody = Static<typeof CreateInvitationBody>;
