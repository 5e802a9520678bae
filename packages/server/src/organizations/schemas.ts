import { Type } from 'typebox';
import { MAX_IMAGE_URL_LENGTH } from '../assets/image-url.js';
import { PaginationQuery } from '../http/schemas.js';
import { EMAIL_MAX_LENGTH } from '../identity/email.js';
import { SLUG_MAX_LENGTH } from './slugs.js';

/** The request fields and answers shared by the organization, member and role routes. */

export const Nullable = <T extends ReturnType<typeof Type.String>>(schema: T) => Type.Union([schema, Type.Null()]);

export const Name = Type.String({ minLength: 1, maxLength: 200, pattern: '^[^\\u0000-\\u001f\\u007f]*$' });
export const Slug = Type.String({ minLength: 1, maxLength: SLUG_MAX_LENGTH, description: '[a-z0-9-], unique in the environment' });
export const ImageUrl = Type.String({
  minLength: 1,
  maxLength: MAX_IMAGE_URL_LENGTH,
  description: 'An https URL, or the publicUrl of an upload ticket (POST /v1/me/assets/upload-url)',
});
export const Role = Type.String({ minLength: 1, maxLength: 64, description: 'owner, admin, member, or a custom role of the environment' });
export const Email = Type.String({ minLength: 1, maxLength: EMAIL_MAX_LENGTH + 64 });
export const Id = Type.String({ minLength: 1, maxLength: 128 });

export const OrganizationSchema = Type.Object({
  id: Type.String({ description: 'org_…' }),
  name: Type.String(),
  slug: Type.String(),
  imageUrl: Nullable(Type.String()),
  createdAt: Type.Integer(),
  updatedAt: Type.Integer(),
});

export const UserOrganizationSchema = Type.Object({
  ...OrganizationSchema.properties,
  role: Type.String({ description: "The caller's role in the organization" }),
  permissions: Type.Array(Type.String(), { description: 'What that role allows, read live' }),
});

export const MemberSchema = Type.Object({
  userId: Type.String(),
  email: Type.String(),
  firstName: Nullable(Type.String()),
  lastName: Nullable(Type.String()),
  imageUrl: Nullable(Type.String()),
  role: Type.String(),
  createdAt: Type.Integer({ description: 'When they joined' }),
});

export const RemovalSchema = Type.Object({ organizationId: Type.String(), userId: Type.String(), removed: Type.Literal(true) });

export const RoleSchema = Type.Object({
  key: Type.String(),
  name: Type.String(),
  description: Nullable(Type.String()),
  permissions: Type.Array(Type.String()),
  system: Type.Boolean({ description: 'System roles (owner, admin, member) are fixed' }),
  createdAt: Type.Union([Type.Integer(), Type.Null()]),
  updatedAt: Type.Union([Type.Integer(), Type.Null()]),
});

export const RoleDescription = Type.String({ maxLength: 500 });
export const Permissions = Type.Array(Type.String({ minLength: 1, maxLength: 140 }), {
  maxItems: 100,
  description: 'Permission keys of the form org:<feature>:<action>',
});

export const OrganizationCreate = {
  name: Name,
  slug: Type.Optional(Slug),
  imageUrl: Type.Optional(Nullable(ImageUrl)),
};

export const RoleBody = Type.Object({ role: Role }, { additionalProperties: false });

export const MemberListQuery = PaginationQuery;
