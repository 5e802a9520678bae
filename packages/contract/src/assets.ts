import { Type, type Static } from 'typebox';
import { define } from './registry.js';

/** What an upload ticket is for (POST /v1/me/assets/upload-url `purpose`). */
export const UPLOAD_PURPOSES = ['user_avatar', 'organization_image'] as const;
export type UploadPurpose = (typeof UPLOAD_PURPOSES)[number];

export const UploadTicket = define(
  'UploadTicket',
  Type.Object({
    uploadUrl: Type.Optional(Type.String({ description: 'PUT the bytes here within 5 minutes. Absent when alreadyExists is true.' })),
    uploadHeaders: Type.Optional(
      Type.Record(Type.String(), Type.String(), { description: 'Headers the PUT must carry, exactly as given.' }),
    ),
    publicUrl: Type.String({ description: 'Save this with PATCH /v1/me or PATCH /v1/me/organization.' }),
    alreadyExists: Type.Boolean(),
  }),
);
export type UploadTicket = Static<typeof UploadTicket>;

/** The answer to the PUT of an upload ticket (filesystem store). */
export const Uploaded = define('Uploaded', Type.Object({ publicUrl: Type.String() }));
export type Uploaded = Static<typeof Uploaded>;

export const ProjectLogo = define('ProjectLogo', Type.Object({ logoUrl: Type.String() }));
export type ProjectLogo = Static<typeof ProjectLogo>;
