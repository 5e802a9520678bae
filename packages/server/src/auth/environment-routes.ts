import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Environment } from '@gatehouse/contract';
import { environmentOf } from '../http/credentials.js';
import { effectiveRateLimit, type Environment as EnvironmentRecord } from '../tenancy/settings.js';

type SsoConnectionSummary = { id: string; name: string; type: 'oidc' | 'oauth2' | 'saml'; domains: string[]; provider: string };

export const tenancyRoutes: FastifyPluginAsyncTypebox<{ ssoConnections?: (environment: EnvironmentRecord) => Promise<SsoConnectionSummary[]> }> = async (
  app,
  { ssoConnections },
) => {
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
        ssoConnections: ssoConnections ? await ssoConnections(environment) : [],
        emailVerification: environment.settings.emailVerification,
        mfa: environment.settings.mfa,
      };
    },
  );
};
