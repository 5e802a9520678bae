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
export const RoleName = Type.String({
  minLength: 1,
  maxLength: 64,
  description: 'owner, admin, member, or a custom role of the environment',
});
export const Email = Type.String({ minLength: 1, maxLength: EMAIL_MAX_LENGTH + 64 });
export const Id = Type.String({ minLength: 1, maxLength: 128 });

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

export const RoleBody = Type.Object({ role: RoleName }, { additionalProperties: false });

export const MemberListQuery = PaginationQuery;
