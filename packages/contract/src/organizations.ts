import { Type, type Static } from 'typebox';
import { List, Page } from './lists.js';
import { define } from './registry.js';

const Nullable = <T extends ReturnType<typeof Type.String>>(schema: T) => Type.Union([schema, Type.Null()]);

export const Organization = define(
  'Organization',
  Type.Object({
    id: Type.String({ description: 'org_…' }),
    name: Type.String(),
    slug: Type.String(),
    imageUrl: Nullable(Type.String()),
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
