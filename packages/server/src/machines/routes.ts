import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { CreateMachineBody, Deleted, MachineList, MachineToken, MachineWithSecret } from '@gatehouse/contract';
import type { FastifyRequest } from 'fastify';
import { Type, type Static } from 'typebox';
import { IdParams } from '../http/schemas.js';
import { apiError } from '../lib/errors.js';
import { environmentOf } from '../http/credentials.js';
import type { ClientCredentials, MachineService } from './service.js';

// With the secret key; the platform's copy (/v1/platform/environments/{id}/machines, the console's)
// comes from operators/mirror.ts.
const BASE = '/v1/machines';
const secret = { credentials: ['secret'] } as const;
const tags = ['machines'];

// Unknown parameters are ignored, as RFC 6749 §3.2 asks.
const TokenBody = Type.Object(
  {
    grant_type: Type.String({ maxLength: 64, description: 'client_credentials' }),
    client_id: Type.Optional(Type.String({ maxLength: 128, description: 'The machine id; or send it with HTTP Basic' })),
    client_secret: Type.Optional(Type.String({ maxLength: 256, description: 'gh_mch_…; or send it with HTTP Basic' })),
    scope: Type.Optional(Type.String({ maxLength: 4096, description: "Space-separated; some of the machine's scopes. Omit for all" })),
  },
  { additionalProperties: true },
);

/** Form-urlencoding's decoding of a Basic credential's halves (RFC 6749 §2.3.1). */
function formDecoded(value: string): string {
  return decodeURIComponent(value.replace(/\+/g, ' '));
}

function malformed(message: string): never {
  throw apiError('invalid_request', message);
}

/** The client's id and secret, from HTTP Basic or from the body, never both (RFC 6749 §2.3). */
function clientCredentials(
  request: FastifyRequest,
  body: { client_id?: string | undefined; client_secret?: string | undefined },
): ClientCredentials {
  const header = request.headers.authorization;
  if (header !== undefined) {
    const match = /^Basic +([A-Za-z0-9+/=]+) *$/i.exec(header);
    if (!match)
      malformed(
        'The token endpoint authenticates the client with HTTP Basic (client_id:client_secret) or with client_id and client_secret in the body.',
      );
    if (body.client_secret !== undefined) malformed('Send the client secret once: with HTTP Basic or in the body, not both.');
    const decoded = Buffer.from(match[1]!, 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    if (colon < 0) malformed('The HTTP Basic credential must be client_id:client_secret, base64-encoded.');
    try {
      const clientId = formDecoded(decoded.slice(0, colon));
      if (body.client_id !== undefined && body.client_id !== clientId)
        malformed('client_id in the body differs from the one in HTTP Basic.');
      return { clientId, clientSecret: formDecoded(decoded.slice(colon + 1)) };
    } catch (error) {
      if (error instanceof URIError) malformed('The HTTP Basic credential is not form-urlencoded text.');
      throw error;
    }
  }
  if (body.client_id === undefined || body.client_secret === undefined) {
    throw apiError(
      'unauthenticated',
      'Authenticate the client: HTTP Basic with client_id:client_secret, or client_id and client_secret in the body.',
    );
  }
  return { clientId: body.client_id, clientSecret: body.client_secret };
}

/** Machines (secret key, and the platform's copy) and the token endpoint of the client-credentials grant. */
export const machineRoutes: FastifyPluginAsyncTypebox<{ machines: MachineService }> = async (app, { machines }) => {
  app.post(
    BASE,
    {
      config: secret,
      schema: {
        summary: 'Create a machine (an OAuth 2.0 client); its clientSecret is shown in this answer only',
        tags,
        body: CreateMachineBody,
        response: { 201: MachineWithSecret },
      },
    },
    async (request, reply) => reply.code(201).send(await machines.create(environmentOf(request), request.body)),
  );

  app.get(
    BASE,
    { config: secret, schema: { summary: 'List the machines of an environment', tags, response: { 200: MachineList } } },
    async (request) => ({ data: await machines.list(environmentOf(request)) }),
  );

  app.delete(
    `${BASE}/:machineId`,
    {
      config: secret,
      schema: {
        summary: 'Delete a machine: its secret stops at once; tokens already issued live out their time',
        tags,
        params: IdParams('machineId'),
        response: { 200: Deleted },
      },
    },
    async (request) => {
      await machines.delete(environmentOf(request), request.params.machineId);
      return { id: request.params.machineId, deleted: true as const };
    },
  );

  app.post(
    `${BASE}/:machineId/secret`,
    {
      config: secret,
      schema: {
        summary: "Replace a machine's secret; the new one is shown in this answer only and the old one stops at once",
        tags,
        params: IdParams('machineId'),
        response: { 200: MachineWithSecret },
      },
    },
    async (request) => machines.rotateSecret(environmentOf(request), request.params.machineId),
  );

  // The token endpoint takes a form (RFC 6749) or JSON; the form parser is this scope's only.
  await app.register(async (scope) => {
    scope.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string', bodyLimit: 16 * 1024 }, (_request, body, done) =>
      done(null, Object.fromEntries(new URLSearchParams(body as string))),
    );
    scope.post(
      '/v1/oauth/token',
      {
        schema: {
          summary: 'A machine token: OAuth 2.0 client credentials (RFC 6749 §4.4)',
          description:
            'grant_type=client_credentials, as a form or JSON; the client authenticates with HTTP Basic or client_id and client_secret in the body. The token is a JWT (typ "m2m+jwt") signed with the environment\'s current key; a wrong secret is 401 unauthenticated.',
          tags,
          consumes: ['application/x-www-form-urlencoded', 'application/json'],
          body: TokenBody,
          response: { 200: MachineToken },
        },
      },
      async (request, reply) => {
        const body = request.body as Static<typeof TokenBody>;
        if (body.grant_type !== 'client_credentials') {
          malformed(
            `Unsupported grant_type ${JSON.stringify(body.grant_type)}: this endpoint issues tokens for grant_type=client_credentials only.`,
          );
        }
        const token = await machines.token(clientCredentials(request, body), body.scope);
        reply.header('cache-control', 'no-store').header('pragma', 'no-cache');
        return token;
      },
    );
  });
};
