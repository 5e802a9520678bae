import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { environmentOf } from '../http/credentials.js';
import { AuthMethodsSchema, effectiveRateLimit } from './settings.js';

const EnvironmentResponse = Type.Object({
  id: Type.String(),
  type: Type.Union([Type.Literal('development'), Type.Literal('production')]),
  rateLimit: Type.Object({ requestsPerMinute: Type.Integer() }),
  authMethods: AuthMethodsSchema,
  signUp: Type.Boolean(),
});

export const tenancyRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/v1/environment',
    {
      config: { credentials: ['publishable'] },
      schema: {
        summary: 'The calling environment: its type, rate limit and enabled sign-in methods',
        tags: ['auth'],
        response: { 200: EnvironmentResponse },
      },
    },
    async (request) => {
      const environment = environmentOf(request);
      return {
        id: environment.id,
        type: environment.type,
        rateLimit: { requestsPerMinute: effectiveRateLimit(environment) },
        authMethods: environment.settings.authMethods,
        signUp: environment.settings.signUp,
      };
    },
  );
};
