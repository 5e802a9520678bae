import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import {
  CreatedWebhookEndpoint,
  Deleted,
  WebhookDelivery,
  WebhookDeliveryPage,
  WebhookEndpoint,
  WebhookEndpointList,
  WebhookEventTypeSchema,
  WebhookSecret,
} from '@gatehouse/contract';
import { Type } from 'typebox';
import { IdParams, PaginationQuery } from '../http/schemas.js';
import type { CursorCodec } from '../lib/cursor.js';
import { apiError } from '../lib/errors.js';
import type { TenancyService } from '../tenancy/service.js';
import type { WebhookService } from './service.js';

const Url = Type.String({
  minLength: 1,
  maxLength: 2048,
  description: 'https; http://localhost:<port> or http://127.0.0.1:<port> in development',
});
const EventTypes = Type.Array(WebhookEventTypeSchema, { minItems: 1, maxItems: 50, description: 'Omit (or null) for every event' });
const Description = Type.Union([Type.String({ maxLength: 500 }), Type.Null()]);

const CreateBody = Type.Object(
  { url: Url, eventTypes: Type.Optional(Type.Union([EventTypes, Type.Null()])), description: Type.Optional(Description) },
  { additionalProperties: false },
);
const PatchBody = Type.Object(
  {
    url: Type.Optional(Url),
    eventTypes: Type.Optional(Type.Union([EventTypes, Type.Null()])),
    enabled: Type.Optional(Type.Boolean()),
    description: Type.Optional(Description),
  },
  { additionalProperties: false },
);

const BASE = '/v1/platform/environments/:environmentId/webhook-endpoints';
const tags = ['webhooks'];

export const webhookRoutes: FastifyPluginAsyncTypebox<{ webhooks: WebhookService; tenancy: TenancyService; cursors: CursorCodec }> = async (
  app,
  { webhooks, tenancy, cursors },
) => {
  const environmentOf = (id: string) => tenancy.getEnvironment(id);

  app.post(
    BASE,
    {
      config: { credentials: ['platform'] },
      schema: {
        summary: 'Create a webhook endpoint; its signing secret is shown in this answer only',
        tags,
        params: IdParams('environmentId'),
        body: CreateBody,
        response: { 201: CreatedWebhookEndpoint },
      },
    },
    async (request, reply) => reply.code(201).send(await webhooks.create(await environmentOf(request.params.environmentId), request.body)),
  );

  app.get(
    BASE,
    {
      config: { credentials: ['platform'] },
      schema: {
        summary: 'List the webhook endpoints of an environment',
        tags,
        params: IdParams('environmentId'),
        response: { 200: WebhookEndpointList },
      },
    },
    async (request) => ({ data: await webhooks.list(await environmentOf(request.params.environmentId)) }),
  );

  app.get(
    `${BASE}/:endpointId`,
    {
      config: { credentials: ['platform'] },
      schema: {
        summary: 'Read a webhook endpoint',
        tags,
        params: IdParams('environmentId', 'endpointId'),
        response: { 200: WebhookEndpoint },
      },
    },
    async (request) => webhooks.get(await environmentOf(request.params.environmentId), request.params.endpointId),
  );

  app.patch(
    `${BASE}/:endpointId`,
    {
      config: { credentials: ['platform'] },
      schema: {
        summary: 'Change a webhook endpoint: url, eventTypes, enabled, description',
        description: 'Enabling an endpoint that Gatehouse disabled (after a 410) clears disabledReason.',
        tags,
        params: IdParams('environmentId', 'endpointId'),
        body: PatchBody,
        response: { 200: WebhookEndpoint },
      },
    },
    async (request) => webhooks.update(await environmentOf(request.params.environmentId), request.params.endpointId, request.body),
  );

  app.delete(
    `${BASE}/:endpointId`,
    {
      config: { credentials: ['platform'] },
      schema: {
        summary: 'Delete a webhook endpoint and its delivery log',
        tags,
        params: IdParams('environmentId', 'endpointId'),
        response: { 200: Deleted },
      },
    },
    async (request) => {
      await webhooks.delete(await environmentOf(request.params.environmentId), request.params.endpointId);
      return { id: request.params.endpointId, deleted: true as const };
    },
  );

  app.post(
    `${BASE}/:endpointId/rotate-secret`,
    {
      config: { credentials: ['platform'] },
      schema: {
        summary: 'Replace the signing secret; the previous one keeps signing alongside it for 24 hours',
        description: 'During those 24 hours every delivery carries two v1 signatures, one per secret.',
        tags,
        params: IdParams('environmentId', 'endpointId'),
        response: { 200: WebhookSecret },
      },
    },
    async (request) => webhooks.rotateSecret(await environmentOf(request.params.environmentId), request.params.endpointId),
  );

  app.get(
    `${BASE}/:endpointId/deliveries`,
    {
      config: { credentials: ['platform'] },
      schema: {
        summary: "An endpoint's delivery attempts, newest first",
        description: 'One row per attempt; messageId is the webhook-id header, the same for every attempt of one event.',
        tags,
        params: IdParams('environmentId', 'endpointId'),
        querystring: PaginationQuery,
        response: { 200: WebhookDeliveryPage },
      },
    },
    async (request) => {
      const environment = await environmentOf(request.params.environmentId);
      const { limit = 20, cursor } = request.query;
      const before = cursor ? cursors.decode<{ env: string; endpoint: string; before: string }>(cursor) : undefined;
      if (before && (before.env !== environment.id || before.endpoint !== request.params.endpointId)) {
        throw apiError('invalid_request', 'The cursor belongs to another listing. Pass back the nextCursor value of this listing.', {
          fields: ['cursor'],
        });
      }
      const { data, last } = await webhooks.deliveries(environment, request.params.endpointId, { limit, beforeId: before?.before });
      return {
        data,
        nextCursor: last ? cursors.encode({ env: environment.id, endpoint: request.params.endpointId, before: last }) : null,
      };
    },
  );

  app.post(
    `${BASE}/:endpointId/deliveries/:deliveryId/retry`,
    {
      config: { credentials: ['platform'], errors: ['conflict'] },
      schema: {
        summary: "Send a delivery's message again now",
        description:
          'Queues a new attempt due now (or brings the queued one forward) and answers 202 with it. 409 when the endpoint is disabled.',
        tags,
        params: IdParams('environmentId', 'endpointId', 'deliveryId'),
        response: { 202: WebhookDelivery },
      },
    },
    async (request, reply) =>
      reply
        .code(202)
        .send(
          await webhooks.retry(await environmentOf(request.params.environmentId), request.params.endpointId, request.params.deliveryId),
        ),
  );
};
