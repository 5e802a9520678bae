import { Type, type Static } from 'typebox';
import { EMAIL_MAX_LENGTH, Id, ImageUrl, Nullable, RoleName, SLUG_MAX_LENGTH } from './fields.js';
import { List, Page } from './lists.js';
import { define } from './registry.js';

export const Organization = define(
  'Organization',
  Type.Object({
    id: Type.String({ description: 'org_…' }),
    name: Type.String(),
    slug: Type.String(),
    imageUrl: Nullable(Type.String()),
    mfaRequired: Type.Boolean({
      description: 'Whether acting as it needs a session that verified a second factor (403 second_factor_required otherwise)',
    }),
    createdAt: Type.Integer(),
    updatedAt: Type.Integer(),
  }),
);
export type Organization = Static<typeof Organization>;

export const OrganizationPage = Page('OrganizationPage', Organization);
export type OrganizationPage = Static<typeof OrganizationPage>;

/** An organization as its member sees it: with their role and what it allows. */
export const UserOrganization = define(
  'UserOrganization',
  Type.Object({
    ...Organization.properties,
    role: Type.String({ description: "The caller's role in the organization" }),
    permissions: Type.Array(Type.String(), { description: 'What that role allows, read live' }),
  }),
);
export type UserOrganization = Static<typeof UserOrganization>;

export const UserOrganizationPage = Page('UserOrganizationPage', UserOrganization);
export type UserOrganizationPage = Static<typeof UserOrganizationPage>;

/** What GET /v1/me shows of each organization of the user. */
export const OrganizationSummary = define(
  'OrganizationSummary',
  Type.Object(
    {
      id: Type.String(),
      name: Type.String(),
      slug: Type.String(),
      role: Type.String(),
      imageUrl: Type.Union([Type.String(), Type.Null()]),
    },
    { additionalProperties: true },
  ),
);
export type OrganizationSummary = Static<typeof OrganizationSummary>;

export const Member = define(
  'Member',
  Type.Object({
    userId: Type.String(),
    email: Type.String(),
    firstName: Nullable(Type.String()),
    lastName: Nullable(Type.String()),
    imageUrl: Nullable(Type.String()),
    role: Type.String(),
    createdAt: Type.Integer({ description: 'When they joined' }),
  }),
);
export type Member = Static<typeof Member>;

export const MemberPage = Page('MemberPage', Member);
export type MemberPage = Static<typeof MemberPage>;

export const MemberRemoved = define(
  'MemberRemoved',
  Type.Object({ organizationId: Type.String(), userId: Type.String(), removed: Type.Literal(true) }),
);
export type MemberRemoved = Static<typeof MemberRemoved>;

export const Role = define(
  'Role',
  Type.Object({
    key: Type.String(),
    name: Type.String(),
    description: Nullable(Type.String()),
    permissions: Type.Array(Type.String()),
    system: Type.Boolean({ description: 'System roles (owner, admin, member) are fixed' }),
    createdAt: Type.Union([Type.Integer(), Type.Null()]),
    updatedAt: Type.Union([Type.Integer(), Type.Null()]),
  }),
);
export type Role = Static<typeof Role>;

export const RoleList = List('RoleList', Role);
export type RoleList = Static<typeof RoleList>;

// ---- request bodies

const Name = Type.String({ minLength: 1, maxLength: 200, pattern: '^[^\\u0000-\\u001f\\u007f]*$' });
const Slug = Type.String({ minLength: 1, maxLength: SLUG_MAX_LENGTH, description: '[a-z0-9-], unique in the environment' });
const Email = Type.String({ minLength: 1, maxLength: EMAIL_MAX_LENGTH + 64 });

const OrganizationCreate = {
  name: Name,
  slug: Type.Optional(Slug),
  imageUrl: Type.Optional(Nullable(ImageUrl)),
};

/** POST /v1/me/organizations: the signed-in user becomes its owner. */
export const CreateUserOrganizationBody = Type.Object(OrganizationCreate, { additionalProperties: false });
export type CreateUserOrganizationBody = Static<typeof CreateUserOrganizationBody>;

/** POST /v1/organizations: `ownerId` becomes its first owner. */
export const CreateOrganizationBody = Type.Object({ ...OrganizationCreate, ownerId: Id }, { additionalProperties: false });
export type CreateOrganizationBody = Static<typeof CreateOrganizationBody>;

/** PATCH /v1/organizations/{organizationId}: omitted fields are unchanged, null removes the image. */
const MfaRequired = Type.Boolean({
  description: 'Require members to have verified a second factor; refused (400) while the environment\'s mfa is "off"',
});

export const UpdateOrganizationBody = Type.Object(
  {
    name: Type.Optional(Name),
    slug: Type.Optional(Slug),
    imageUrl: Type.Optional(Nullable(ImageUrl)),
    mfaRequired: Type.Optional(MfaRequired),
  },
  { additionalProperties: false },
);
export type UpdateOrganizationBody = Static<typeof UpdateOrganizationBody>;

/** PATCH /v1/me/organization */
export const UpdateCurrentOrganizationBody = Type.Object(
  { name: Type.Optional(Name), imageUrl: Type.Optional(Nullable(ImageUrl)), mfaRequired: Type.Optional(MfaRequired) },
  { additionalProperties: false },
);
export type UpdateCurrentOrganizationBody = Static<typeof UpdateCurrentOrganizationBody>;

/** POST /v1/organizations/{organizationId}/members */
export const AddMemberBody = Type.Object(
  { userId: Type.Optional(Id), email: Type.Optional(Email), role: Type.Optional(RoleName) },
  { additionalProperties: false, description: 'Exactly one of userId or email; role defaults to member' },
);
export type AddMemberBody = Static<typeof AddMemberBody>;

/** POST /v1/me/organization/members */
export const AddCurrentMemberBody = Type.Object({ email: Email, role: Type.Optional(RoleName) }, { additionalProperties: false });
export type AddCurrentMemberBody = Static<typeof AddCurrentMemberBody>;

/** PATCH of a member: the new role. */
export const RoleBody = Type.Object({ role: RoleName }, { additionalProperties: false });
export type RoleBody = Static<typeof RoleBody>;
