import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { HandoffRedirect, SignedIn } from '@gatehouse/contract';
import { Type } from 'typebox';
import { environmentOf, sessionOf } from '../http/credentials.js';
import { requestContext } from '../http/request-context.js';
import { apiError } from '../lib/errors.js';
import type { TenancyService } from '../tenancy/service.js';
import { HOSTED_CSP, HOSTED_PAGES, hostedBundle, renderPage, type HostedPage } from './page.js';
import type { HandoffService } from './service.js';

const Token = Type.String({ minLength: 1, maxLength: 512 });

export const hostedRoutes: FastifyPluginAsyncTypebox<{ handoff: HandoffService; tenancy: TenancyService; baseUrl: string }> = async (
  app,
  { handoff, tenancy, baseUrl },
) => {
  app.post(
    '/v1/auth/handoff',
    {
      config: { credentials: ['publishable'] },
      schema: {
        summary: 'Exchange a hosted page\'s one-time handoff token (#__gh_handoff=) for a session',
        description: 'The token is single-use, valid 60 s, and only in the environment whose hosted page issued it.',
        tags: ['auth'],
        body: Type.Object({ token: Token }, { additionalProperties: false }),
        response: { 200: SignedIn },
      },
    },
    async (request) => handoff.exchange(environmentOf(request), request.body.token, requestContext(request)),
  );

  app.post(
    '/v1/me/handoff',
    {
      config: { credentials: ['session'] },
      schema: {
        summary: 'A hosted page hands the signed-in user to redirectUrl (origin lock) with a one-time token',
        tags: ['me'],
        body: Type.Object({ redirectUrl: Type.String({ minLength: 1, maxLength: 2048 }) }, { additionalProperties: false }),
        response: { 200: HandoffRedirect },
      },
    },
    async (request) => {
      const { environment, session } = sessionOf(request);
      return handoff.create(environment, session, request.body.redirectUrl);
    },
  );

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
        summary: 'A hosted page (HTML): sign-in, sign-up, user, organization or accept-invitation (the default invitation link)',
        tags: ['hosted'],
        params: Type.Object({ environmentId: Type.String({ maxLength: 100 }), page: Type.String({ maxLength: 40 }) }),
        querystring: Type.Object({ redirect_url: Type.Optional(Type.String({ maxLength: 2048 })) }),
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
        redirectError: handoff.redirectProblem(environment, redirectUrl ?? undefined),
        applicationName: project.name,
        logoUrl: project.logo_url,
      });
      return reply.header('content-type', 'text/html; charset=utf-8').header('content-security-policy', HOSTED_CSP).send(html);
    },
  );
};
