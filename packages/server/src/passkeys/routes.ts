import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Deleted, Passkey, PasskeyCreateBody, PasskeyList, PasskeyOptionsAnswer, PasskeyRenameBody } from '@gatehouse/contract';
import { environmentOf, sessionOf } from '../http/credentials.js';
import { IdParams } from '../http/schemas.js';
import type { PasskeyService } from './service.js';

const secret = { credentials: ['secret'] } as const;
const session = { credentials: ['session'] } as const;
const tags = ['me'];

/** The signed-in user's passkeys (ST) and the operators' view of a user's (SK). */
export const passkeyRoutes: FastifyPluginAsyncTypebox<{ passkeys: PasskeyService }> = async (app, { passkeys }) => {
  app.post(
    '/v1/me/passkeys/registration',
    {
      config: session,
      schema: {
        summary: 'Start registering a passkey: PublicKeyCredentialCreationOptions (JSON) for navigator.credentials.create()',
        description:
          'Needs a verification within 10 minutes (a fresh sign-in counts). The challenge lives 5 minutes; a new call voids the previous one. 403 method_disabled while both authMethods.passkey and mfa are off.',
        tags,
        response: { 200: PasskeyOptionsAnswer },
      },
    },
    async (request) => {
      const { environment, session: current } = sessionOf(request);
      return passkeys.registrationOptions(environment, current, request.headers.origin);
    },
  );

  app.post(
    '/v1/me/passkeys',
    {
      config: session,
      schema: {
        summary: 'Register a passkey with the response of navigator.credentials.create() to the latest registration options',
        description:
          '409 conflict when this credential is already registered in the environment. 400 invalid_request when it does not verify, when its public key is over 1,024 characters (or RSA other than 2048–4096 bits with exponent 65537), or when the account already holds 25 passkeys.',
        tags,
        body: PasskeyCreateBody,
        response: { 201: Passkey },
      },
    },
    async (request, reply) => {
      const { environment, session: current } = sessionOf(request);
      return reply.code(201).send(await passkeys.create(environment, current, request.body));
    },
  );

  app.get(
    '/v1/me/passkeys',
    { config: session, schema: { summary: "The signed-in user's passkeys", tags, response: { 200: PasskeyList } } },
    async (request) => {
      const { environment, session: current } = sessionOf(request);
      return passkeys.list(environment, current.userId);
    },
  );

  app.patch(
    '/v1/me/passkeys/:passkeyId',
    {
      config: session,
      schema: { summary: 'Rename a passkey', tags, params: IdParams('passkeyId'), body: PasskeyRenameBody, response: { 200: Passkey } },
    },
    async (request) => {
      const { environment, session: current } = sessionOf(request);
      return passkeys.rename(environment, current, request.params.passkeyId, request.body.name);
    },
  );

  app.delete(
    '/v1/me/passkeys/:passkeyId',
    {
      config: session,
      schema: {
        summary: 'Remove a passkey (needs a verification within 10 minutes)',
        tags,
        params: IdParams('passkeyId'),
        response: { 200: Deleted },
      },
    },
    async (request) => {
      const { environment, session: current } = sessionOf(request);
      await passkeys.remove(environment, current, request.params.passkeyId);
      return { id: request.params.passkeyId, deleted: true as const };
    },
  );

  app.get(
    '/v1/users/:userId/passkeys',
    {
      config: secret,
      schema: { summary: "A user's passkeys", tags: ['users'], params: IdParams('userId'), response: { 200: PasskeyList } },
    },
    async (request) => passkeys.listForUser(environmentOf(request), request.params.userId),
  );

  app.delete(
    '/v1/users/:userId/passkeys/:passkeyId',
    {
      config: secret,
      schema: {
        summary: "Remove one of a user's passkeys (support: a lost device)",
        tags: ['users'],
        params: IdParams('userId', 'passkeyId'),
        response: { 200: Deleted },
      },
    },
    async (request) => {
      await passkeys.removeForUser(environmentOf(request), request.params.userId, request.params.passkeyId);
      return { id: request.params.passkeyId, deleted: true as const };
    },
  );
};
