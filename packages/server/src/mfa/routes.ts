import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import {
  BackupCodes,
  MfaStatus,
  PasskeyOptionsAnswer,
  Reverified,
  ReverifyBody,
  TotpEnabled,
  TotpSetup,
  TotpVerifyBody,
  User,
} from '@gatehouse/contract';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { Type } from 'typebox';
import { environmentOf, sessionOf } from '../http/credentials.js';
import { requestContext } from '../http/request-context.js';
import { IdParams } from '../http/schemas.js';
import type { IdentityService } from '../identity/service.js';
import type { MfaService } from './service.js';

export interface MfaRouteOptions {
  mfa: MfaService;
  identity: Pick<IdentityService, 'getUser'>;
}

const secret = { credentials: ['secret'] } as const;
const session = { credentials: ['session'] } as const;
const tags = ['me'];

export const mfaRoutes: FastifyPluginAsyncTypebox<MfaRouteOptions> = async (app, { mfa, identity }) => {
  app.get(
    '/v1/me/mfa',
    {
      config: session,
      schema: { summary: "The signed-in user's second factors", tags, response: { 200: MfaStatus } },
    },
    async (request) => {
      const { environment, session: current } = sessionOf(request);
      return mfa.status(environment, current.userId);
    },
  );

  app.post(
    '/v1/me/mfa/totp',
    {
      config: session,
      schema: {
        summary: 'Start enabling TOTP: a new secret, pending until POST /v1/me/mfa/totp/verify confirms a code',
        description:
          'A second call replaces a pending secret. 403 method_disabled while the environment\'s mfa is "off"; 409 when TOTP is already on.',
        tags,
        response: { 200: TotpSetup },
      },
    },
    async (request) => {
      const { environment, session: current } = sessionOf(request);
      return mfa.startTotp(environment, current.userId);
    },
  );

  app.post(
    '/v1/me/mfa/totp/verify',
    {
      config: session,
      schema: {
        summary: 'Confirm the pending secret with a code: TOTP is enabled and 10 backup codes are shown, once',
        tags,
        body: TotpVerifyBody,
        response: { 200: TotpEnabled },
      },
    },
    async (request) => {
      const { environment, session: current } = sessionOf(request);
      return mfa.confirmTotp(environment, current, request.body.code);
    },
  );

  app.delete(
    '/v1/me/mfa/totp',
    {
      config: session,
      schema: {
        summary: 'Remove TOTP (needs a verification within 10 minutes); with no second factor left, the backup codes go too',
        tags,
        response: { 204: Type.Null() },
      },
    },
    async (request, reply) => {
      const { environment, session: current } = sessionOf(request);
      await mfa.removeTotp(environment, current);
      return reply.code(204).send(null);
    },
  );

  app.post(
    '/v1/me/mfa/backup-codes',
    {
      config: session,
      schema: {
        summary: 'Replace the backup codes with 10 new ones, shown once (needs a verification within 10 minutes)',
        tags,
        response: { 200: BackupCodes },
      },
    },
    async (request) => {
      const { environment, session: current } = sessionOf(request);
      return mfa.regenerateBackupCodes(environment, current);
    },
  );

  app.post(
    '/v1/me/reverify',
    {
      config: session,
      schema: {
        summary:
          'Verify a factor again (password, authenticator code, backup code or passkey): a new access token with the new amr and fva',
        description:
          'Sensitive changes need a verification within the last 10 minutes (403 reverification_required otherwise). The refresh token is unchanged.',
        tags,
        body: ReverifyBody,
        response: { 200: Reverified },
      },
    },
    async (request) => {
      const { environment, session: current } = sessionOf(request);
      return mfa.reverification.reverify(environment, current, request.body, requestContext(request));
    },
  );

  app.post(
    '/v1/me/reverify/passkey-options',
    {
      config: session,
      schema: {
        summary: 'A challenge for one of your passkeys, to answer in POST /v1/me/reverify {passkey}',
        description: 'The challenge lives 5 minutes; a new call voids the previous one. 400 when the account has no passkey.',
        tags,
        response: { 200: PasskeyOptionsAnswer },
      },
    },
    async (request) => {
      const { environment, session: current } = sessionOf(request);
      return mfa.reverification.passkeyOptions(environment, current, request.headers.origin);
    },
  );

  app.get(
    '/v1/users/:userId/mfa',
    {
      config: secret,
      schema: {
        summary: "A user's second factors (TOTP, backup codes left, passkeys), as GET /v1/me/mfa shows them: for support",
        tags: ['users'],
        params: IdParams('userId'),
        response: { 200: MfaStatus },
      },
    },
    async (request) => {
      const environment = environmentOf(request);
      // 404 for a user of another environment, not an empty status.
      await identity.getUser(environment, request.params.userId);
      return mfa.status(environment, request.params.userId);
    },
  );

  app.delete(
    '/v1/users/:userId/mfa',
    {
      config: secret,
      schema: {
        summary: "Remove every second factor of a user (a support reset) and revoke the user's sessions",
        tags: ['users'],
        params: IdParams('userId'),
        response: { 200: User },
      },
    },
    async (request) => {
      const environment = environmentOf(request);
      await mfa.resetUser(environment, request.params.userId);
      return identity.getUser(environment, request.params.userId);
    },
  );
};

/** `/v1/me/organization` and every path under it. */
export function actsAsOrganization(routeUrl: string | undefined): boolean {
  return routeUrl === '/v1/me/organization' || (routeUrl?.startsWith('/v1/me/organization/') ?? false);
}

/**
 * Refuses `/v1/me/organization` and everything under it with `403 second_factor_required` while the
 * organization the session acts as requires MFA and the session has not verified a second factor.
 * Registered app-wide (fastify-plugin), after the credentials check.
 */
export const organizationMfaGate = fp<{ mfa: MfaService }>(
  async (app: FastifyInstance, { mfa }) => {
    // Before the body is validated: a refused session learns nothing of the route.
    app.addHook('preValidation', async (request) => {
      if (!actsAsOrganization(request.routeOptions.url) || request.auth?.kind !== 'session') return;
      const { environment, session: current } = sessionOf(request);
      if (current.activeOrganizationId === null) return;
      await mfa.assertOrganizationAccess(environment, current.sessionId);
    });
  },
  { name: 'gatehouse-organization-mfa-gate' },
);
