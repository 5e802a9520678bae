import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Environment } from '@gatehouse/contract';
import { environmentOf } from '../http/credentials.js';
import { effectiveRateLimit } from './settings.js';

export const tenancyRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/v1/environment',
    {
      config: { credentials: ['publishable'] },
      schema: {
        summary: 'The calling environment: its type, rate limit and enabled sign-in methods',
        tags: ['auth'],
        response: { 200: Environment },
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
        emailVerification: environment.settings.emailVerification,
      };
    },
  );
};
