import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { validateRedirectUrl } from '../tenancy/redirect.js';
import { apiError } from '../lib/errors.js';
import type { TenancyService } from '../tenancy/service.js';
import type { Environment } from '../tenancy/settings.js';
import { HOSTED_CSP, HOSTED_PAGES, hostedBundle, renderPage, type HostedPage } from './page.js';

/** The refusal a hosted page shows for a redirect_url outside the origin lock, or null. */
function redirectProblem(environment: Environment, redirectUrl: string | undefined): string | null {
  if (redirectUrl === undefined) return null;
  try {
    validateRedirectUrl(environment, redirectUrl);
    return null;
  } catch (error) {
    return error instanceof Error ? error.message.replace(/^redirectUrl/, 'The redirect_url') : 'The redirect_url is not allowed.';
  }
}

export const hostedRoutes: FastifyPluginAsyncTypebox<{ tenancy: TenancyService; baseUrl: string }> = async (app, { tenancy, baseUrl }) => {
  app.get('/hosted/assets/hosted.js', { schema: { summary: 'The hosted pages\' script (JavaScript)', tags: ['hosted'] } }, async (_request, reply) => {
    const script = await hostedBundle().catch(() => {
      throw apiError('unavailable', 'The hosted pages are not built. Run `npm install` (or `npm run build -w packages/react`).');
    });
    return reply
      .header('content-type', 'text/javascript; charset=utf-8')
      .header('cache-control', 'public, max-age=300')
      .send(script);
  });

  app.get(
    '/hosted/:environmentId/:page',
    {
      schema: {
        summary:
          'A hosted page (HTML): sign-in, sign-up, user, organization, accept-invitation (the default invitation link) or actor (redeems an actor token)',
        tags: ['hosted'],
        params: Type.Object({ environmentId: Type.String({ maxLength: 100 }), page: Type.String({ maxLength: 40 }) }),
        querystring: Type.Object({
          redirect_url: Type.Optional(Type.String({ maxLength: 2048 })),
          // Read by the actor page's script, never by the server (and never logged: http/logging.ts).
          token: Type.Optional(Type.String({ maxLength: 512 })),
        }),
      },
    },
    async (request, reply) => {
      const { environmentId, page } = request.params;
      if (!(HOSTED_PAGES as readonly string[]).includes(page)) {
        throw apiError('not_found', `There is no hosted page "${page}". Hosted pages: ${HOSTED_PAGES.join(', ')}.`);
      }
      const environment = await tenancy.getEnvironment(environmentId);
      const redirectUrl = request.query.redirect_url ?? null;
      const { project } = await tenancy.getProject(environment.projectId);
      const html = renderPage({
        page: page as HostedPage,
        environmentId: environment.id,
        publishableKey: environment.publishableKey,
        // The configured origin, never the request's Host: a forged Host would point the page's
        // API calls (and the password typed into it) at another server.
        baseUrl,
        redirectUrl,
        redirectError: redirectProblem(environment, redirectUrl ?? undefined),
        applicationName: project.name,
        logoUrl: project.logo_url,
      });
      return reply.header('content-type', 'text/html; charset=utf-8').header('content-security-policy', HOSTED_CSP).send(html);
    },
  );
};
