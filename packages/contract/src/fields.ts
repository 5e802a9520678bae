import { Type } from 'typebox';

// The request fields the bodies share, with the limits the server enforces: the server's own
// checks import these numbers, so a limit changes in one place.

export const PASSWORD_MAX_LENGTH = 1024;
/** RFC 5321's limit on an address. */
export const EMAIL_MAX_LENGTH = 254;
export const MAX_IMAGE_URL_LENGTH = 2048;
export const SLUG_MAX_LENGTH = 64;

export const Nullable = <T extends ReturnType<typeof Type.String>>(schema: T) => Type.Union([schema, Type.Null()]);

export const Password = Type.String({ maxLength: PASSWORD_MAX_LENGTH });
export const Id = Type.String({ minLength: 1, maxLength: 128 });
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
