import { Type, type Static } from 'typebox';
import { List, Page } from './lists.js';
import { define } from './registry.js';

/** Every event type a webhook endpoint can subscribe to. */
export const WEBHOOK_EVENT_TYPES = [
  'user.created',
  'user.updated',
  'user.deleted',
  'identity.created',
  'identity.deleted',
  'session.created',
  'session.revoked',
  'organization.created',
  'organization.updated',
  'organization.deleted',
  'organizationMembership.created',
  'organizationMembership.updated',
  'organizationMembership.deleted',
  'organizationInvitation.created',
  'organizationInvitation.accepted',
  'organizationInvitation.revoked',
] as const;
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

export const WebhookEventTypeSchema = Type.Union(WEBHOOK_EVENT_TYPES.map((t) => Type.Literal(t)));

const endpointFields = {
  id: Type.String({ description: 'whe_…' }),
  url: Type.String(),
  eventTypes: Type.Union([Type.Array(Type.String()), Type.Null()], { description: 'The subscribed event types; null: every event' }),
  description: Type.Union([Type.String(), Type.Null()]),
  enabled: Type.Boolean({ description: 'False after the receiver answered 410 Gone, or when turned off' }),
  disabledReason: Type.Union([Type.String(), Type.Null()], { description: 'Why Gatehouse disabled the endpoint, if it did' }),
  createdAt: Type.Integer(),
  updatedAt: Type.Integer(),
};

export const WebhookEndpointHealth = define(
  'WebhookEndpointHealth',
  Type.Object({
    recentAttempts: Type.Integer({ description: 'Finished attempts considered: the last 100 at most' }),
    recentFailures: Type.Integer(),
    failureRate: Type.Union([Type.Number({ minimum: 0, maximum: 1 }), Type.Null()], {
      description: 'recentFailures / recentAttempts; null before any attempt finished',
    }),
  }),
);
export type WebhookEndpointHealth = Static<typeof WebhookEndpointHealth>;

export const WebhookEndpoint = define('WebhookEndpoint', Type.Object({ ...endpointFields, health: WebhookEndpointHealth }));
export type WebhookEndpoint = Static<typeof WebhookEndpoint>;

/** The endpoint as created: with its signing secret, shown this once. */
export const CreatedWebhookEndpoint = define(
  'CreatedWebhookEndpoint',
  Type.Object({ ...endpointFields, secret: Type.String({ description: 'whsec_…; shown only here and by rotate-secret' }) }),
);
export type CreatedWebhookEndpoint = Static<typeof CreatedWebhookEndpoint>;

export const WebhookEndpointList = List('WebhookEndpointList', WebhookEndpoint);
export type WebhookEndpointList = Static<typeof WebhookEndpointList>;

export const WebhookSecret = define(
  'WebhookSecret',
  Type.Object({
    secret: Type.String({ description: 'whsec_…: the new secret. The previous one keeps signing alongside it for 24 hours' }),
  }),
);
export type WebhookSecret = Static<typeof WebhookSecret>;

export const WebhookDelivery = define(
  'WebhookDelivery',
  Type.Object({
    id: Type.String({ description: 'whd_…: one attempt' }),
    messageId: Type.String({ description: 'The webhook-id header: the same for every attempt of one event' }),
    eventType: Type.String(),
    attempt: Type.Integer({ description: 'Counts from 1' }),
    status: Type.Union([Type.Literal('pending'), Type.Literal('succeeded'), Type.Literal('failed')], {
      description: 'pending: waiting to be sent at nextAttemptAt; succeeded: the receiver answered 2xx; failed: it did not',
    }),
    responseStatus: Type.Union([Type.Integer(), Type.Null()]),
    error: Type.Union([Type.String(), Type.Null()]),
    nextAttemptAt: Type.Union([Type.Integer(), Type.Null()], {
      description: 'Pending: when it is sent. Failed: when the retry that follows it is due; null if none follows',
    }),
    createdAt: Type.Integer(),
  }),
);
export type WebhookDelivery = Static<typeof WebhookDelivery>;

export const WebhookDeliveryPage = Page('WebhookDeliveryPage', WebhookDelivery);
export type WebhookDeliveryPage = Static<typeof WebhookDeliveryPage>;
