import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { ProjectLogo, UploadTicket, Uploaded } from '@gatehouse/contract';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { sessionOf, type SessionIdentity } from '../http/credentials.js';
import { IdParams } from '../http/schemas.js';
import type { Environment } from '../tenancy/settings.js';
import { MAX_IMAGE_BYTES } from './image.js';
import { IMMUTABLE_CACHE_CONTROL, type UploadBinding } from './object-store.js';
import type { AssetService, UploadPurpose } from './service.js';

/** Decides whether a session may upload for a purpose; throws a 4xx ApiError when not. */
export type UploadAuthorizer = (caller: { environment: Environment; session: SessionIdentity }, purpose: UploadPurpose) => Promise<void>;

/** The organizations' check of a permission on the live membership of the session's current organization. */
export type CurrentPermissionCheck = (
  environment: Environment,
  session: SessionIdentity,
  permission: 'org:manage',
  action: string,
) => Promise<void>;

/**
 * Avatars for anyone signed in. Organization images need org:manage in the session's current
 * organization, read from the live membership by the organizations' own check; the token's
 * org_* claims are a snapshot and authorize nothing (a demoted admin's token still claims it).
 */
export function uploadAuthorizer(assertCurrentPermission: CurrentPermissionCheck): UploadAuthorizer {
  return async ({ environment, session }, purpose) => {
    if (purpose === 'organization_image') {
      await assertCurrentPermission(environment, session, 'org:manage', 'Uploading an organization image');
    }
  };
}

const TicketBody = Type.Object(
  {
    purpose: Type.String({ maxLength: 64, description: 'user_avatar or organization_image' }),
    contentType: Type.String({ maxLength: 255, description: 'image/png, image/jpeg or image/webp' }),
    contentLength: Type.Integer({ description: 'Size of the file in bytes; at most 1,048,576.' }),
    sha256: Type.String({ maxLength: 128, description: 'Hex SHA-256 digest of the file; it becomes the object key.' }),
    width: Type.Integer({ description: 'Width in pixels; at most 4096.' }),
    height: Type.Integer({ description: 'Height in pixels; at most 4096.' }),
  },
  { additionalProperties: false },
);

export interface AssetRouteOptions {
  assets: AssetService;
  authorizeUpload: UploadAuthorizer;
}

/** `POST /v1/me/assets/upload-url`, and for the filesystem store its signed PUT and public GET. */
export const assetRoutes: FastifyPluginAsyncTypebox<AssetRouteOptions> = async (app, { assets, authorizeUpload }) => {
  app.post(
    '/v1/me/assets/upload-url',
    {
      config: { credentials: ['session'] },
      schema: {
        summary: 'Request a signed upload ticket for a profile or organization image',
        description:
          'PNG, JPEG or WebP, at most 1 MB and 4096×4096. organization_image needs org:manage in the current organization (read live, not from the token). When alreadyExists is true, save publicUrl directly; otherwise PUT the bytes to uploadUrl with uploadHeaders, then save publicUrl as imageUrl.',
        tags: ['me'],
        body: TicketBody,
        response: { 200: UploadTicket },
      },
    },
    async (request) => {
      const caller = sessionOf(request);
      return assets.createUploadTicket(caller.environment, request.body, (purpose) => authorizeUpload(caller, purpose));
    },
  );

  if (assets.filesystem) await app.register(filesystemObjectRoutes, { assets });
};

/**
 * Image bodies are read raw, only on the routes of the plugin that calls this, with a 1 MiB
 * limit. Every content type is read, so the route's own checks (which run first, in onRequest)
 * produce the refusal rather than a generic 415.
 */
function acceptRawBodies(app: FastifyInstance): void {
  app.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: MAX_IMAGE_BYTES }, (_request, body, done) => done(null, body));
}

function declaredLength(request: FastifyRequest): number | undefined {
  const raw = request.headers['content-length'];
  return raw === undefined || !/^\d+$/.test(raw) ? undefined : Number(raw);
}

function bodyBytes(request: FastifyRequest): Buffer {
  return Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
}

const ObjectParams = Type.Object(
  { namespace: Type.String({ maxLength: 80 }), sha256: Type.String({ maxLength: 80 }) },
  { additionalProperties: false },
);

const filesystemObjectRoutes: FastifyPluginAsyncTypebox<{ assets: AssetService }> = async (app, { assets }) => {
  acceptRawBodies(app);
  const bindings = new WeakMap<FastifyRequest, UploadBinding>();

  app.put(
    '/v1/assets/:namespace/:sha256',
    {
      schema: {
        summary: 'Upload the bytes of an upload ticket (filesystem store); the URL is the credential',
        tags: ['assets'],
        params: ObjectParams,
        response: { 200: Uploaded },
      },
      // Everything that can be judged from the URL and headers is judged before the body is read.
      onRequest: async (request) => {
        const params = request.params as { namespace: string; sha256: string };
        const query = request.query as Record<string, unknown>;
        bindings.set(request, assets.openUpload(params, query, request.headers['content-type'], declaredLength(request)));
      },
    },
    async (request) => ({ publicUrl: await assets.completeUpload(bindings.get(request)!, bodyBytes(request)) }),
  );

  app.get(
    '/v1/assets/:namespace/:sha256',
    { schema: { summary: 'Read a stored image (filesystem store)', tags: ['assets'], params: ObjectParams } },
    async (request, reply) => {
      const stored = await assets.readObject(request.params);
      // Content-addressed, so the digest is a perfect validator and the bytes never change.
      const etag = `"${stored.sha256}"`;
      void reply.headers({
        'content-type': stored.contentType,
        'x-content-type-options': 'nosniff',
        'content-security-policy': "default-src 'none'",
        'cache-control': IMMUTABLE_CACHE_CONTROL,
        'cross-origin-resource-policy': 'cross-origin',
        etag,
      });
      const match = request.headers['if-none-match'];
      if (match !== undefined && match.split(',').some((tag) => tag.trim().replace(/^W\//, '') === etag)) return reply.code(304).send();
      return reply.send(stored.bytes);
    },
  );
};

/** `PUT /v1/platform/projects/{id}/logo`: project branding, uploaded by the operator. */
export const brandingRoutes: FastifyPluginAsyncTypebox<{ assets: AssetService }> = async (app, { assets }) => {
  acceptRawBodies(app);
  const platform = { credentials: ['platform'] } as const;

  app.put(
    '/v1/platform/projects/:projectId/logo',
    {
      config: platform,
      schema: {
        summary: 'Upload the project logo used in emails and hosted pages (raw PNG, JPEG or WebP bytes, at most 1 MB)',
        tags: ['platform'],
        params: IdParams('projectId'),
        response: { 200: ProjectLogo },
      },
      onRequest: async (request) => assets.checkLogoRequest(request.headers['content-type'], declaredLength(request)),
    },
    async (request) => ({
      logoUrl: await assets.setProjectLogo(request.params.projectId, bodyBytes(request), request.headers['content-type']!),
    }),
  );

  app.delete(
    '/v1/platform/projects/:projectId/logo',
    {
      config: platform,
      schema: { summary: 'Remove the project logo', tags: ['platform'], params: IdParams('projectId'), response: { 204: Type.Null() } },
    },
    async (request, reply) => {
      await assets.removeProjectLogo(request.params.projectId);
      return reply.code(204).send(null);
    },
  );
};
