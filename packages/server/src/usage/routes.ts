import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { ProjectUsage, RequestRate as RequestRateShape } from '@gatehouse/contract';
import { Type } from 'typebox';
import { apiError } from '../lib/errors.js';
import { IdParams } from '../http/schemas.js';
import type { TenancyService } from '../tenancy/service.js';
import type { RequestRate } from './request-rate.js';
import { isMonth, utcMonth, type UsageService } from './service.js';

export const usageRoutes: FastifyPluginAsyncTypebox<{ usage: UsageService; now: () => number; rate: RequestRate; tenancy: TenancyService }> = async (
  app,
  { usage, now, rate, tenancy },
) => {
  app.get(
    '/v1/platform/projects/:projectId/requests',
    {
      config: { credentials: ['platform'] },
      schema: {
        summary: "Requests per minute over the last hour for each of a project's environments, summed over every node through Redis when REDIS_URL is set (else this node's)",
        tags: ['platform'],
        params: IdParams('projectId'),
        response: { 200: RequestRateShape },
      },
    },
    async (request) => {
      const { environments } = await tenancy.getProject(request.params.projectId);
      return {
        projectId: request.params.projectId,
        environments: await Promise.all(environments.map(async (e) => ({ id: e.id, type: e.type, perMinute: await rate.lastHour(e.id) }))),
      };
    },
  );

  app.get(
    '/v1/platform/projects/:projectId/usage',
    {
      config: { credentials: ['platform'] },
      schema: {
        summary: 'Monthly active users of a project per environment; only production is billable',
        tags: ['platform'],
        params: IdParams('projectId'),
        querystring: Type.Object(
          { month: Type.Optional(Type.String({ maxLength: 7, description: 'YYYY-MM (UTC); defaults to the current month' })) },
          { additionalProperties: false },
        ),
        response: { 200: ProjectUsage },
      },
    },
    async (request) => {
      const month = request.query.month ?? utcMonth(now());
      if (!isMonth(month)) {
        throw apiError('invalid_request', `Query parameter "month" must be a UTC month as YYYY-MM, such as ${utcMonth(now())}.`, {
          fields: ['month'],
        });
      }
      return usage.projectUsage(request.params.projectId, month);
    },
  );
};
