import type { EnvironmentId } from '../lib/ids.js';
import type {
  CreatedWebhookEndpoint,
  WebhookDelivery,
  WebhookEndpoint,
  WebhookEndpointHealth,
  WebhookEventType,
} from '@gatehouse/contract';
import type { Store } from '../db/index.js';
import { newId } from '../lib/crypto.js';
import { apiError, notFound } from '../lib/errors.js';
import type { Environment } from '../tenancy/settings.js';
import { endpointUrlProblem } from '../lib/addresses.js';
import * as q from './queries.js';
import { newWebhookSecret, type SecretBox } from './secrets.js';

/** How long a rotated-out secret keeps signing alongside the new one. */
export const PREVIOUS_SECRET_GRACE_MS = 24 * 3_600_000;

export interface EndpointInput {
  url?: string | undefined;
  eventTypes?: WebhookEventType[] | null | undefined;
  description?: string | null | undefined;
  enabled?: boolean | undefined;
}

/** How many of an endpoint's latest finished attempts its failure rate covers. */
export const HEALTH_WINDOW = 100;

type EndpointFields = Omit<WebhookEndpoint, 'health'>;

export function endpointView(row: q.EndpointRow): EndpointFields {
  return {
    id: row.id,
    url: row.url,
    eventTypes: row.event_types === null ? null : (JSON.parse(row.event_types) as string[]),
    description: row.description,
    enabled: row.enabled === 1,
    disabledReason: row.disabled_reason,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

export function deliveryView(row: q.DeliveryRow): WebhookDelivery {
  return {
    id: row.id,
    messageId: row.event_id,
    eventType: row.event_type,
    attempt: row.attempt,
    status: row.status,
    responseStatus: row.response_status,
    error: row.error,
    nextAttemptAt: row.next_attempt_at,
    createdAt: row.created_at,
  };
}

function checkUrl(environment: Environment, url: string): void {
  const problem = endpointUrlProblem(url, environment.type);
  if (problem) throw apiError('invalid_request', problem, { fields: ['url'] });
}

function eventTypesColumn(types: WebhookEventType[] | null | undefined): string | null {
  return types === null || types === undefined ? null : JSON.stringify([...new Set(types)]);
}

/** Webhook endpoints and their delivery log, managed through the platform API. */
export class WebhookService {
  constructor(
    private readonly store: Store,
    /** Endpoint secrets, sealed; the delivery worker opens them with the same box to sign. */
    private readonly secrets: SecretBox,
    private readonly now: () => number,
    private readonly worker: {
      /** Sends due attempts now. */
      deliverNow(): void;
      /** An environment's endpoints changed: its events are sent at once again (see WebhookWorker.eventsCommitted). */
      endpointsChanged(environmentId: EnvironmentId): void;
    },
  ) {}

  async create(environment: Environment, input: EndpointInput & { url: string }): Promise<CreatedWebhookEndpoint> {
    checkUrl(environment, input.url);
    const now = this.now();
    const id = newId('whe', environment.id);
    const secret = newWebhookSecret();
    const row: Omit<q.EndpointRow, 'environment_id'> = {
      id,
      url: input.url,
      event_types: eventTypesColumn(input.eventTypes),
      description: input.description ?? null,
      enabled: 1,
      disabled_reason: null,
      secret: this.secrets.seal(environment.id, id, secret),
      previous_secret: null,
      previous_secret_until: null,
      created_at: now,
      updated_at: now,
    };
    await q.insertEndpoint(this.store.db, environment.id, row);
    this.worker.endpointsChanged(environment.id);
    return { ...endpointView({ ...row, environment_id: environment.id }), secret };
  }

  async list(environment: Environment): Promise<WebhookEndpoint[]> {
    const rows = await q.listEndpoints(this.store.db, environment.id);
    return Promise.all(rows.map((row) => this.withHealth(row)));
  }

  async get(environment: Environment, endpointId: string): Promise<WebhookEndpoint> {
    return this.withHealth(await this.row(environment, endpointId));
  }

  private async withHealth(row: q.EndpointRow): Promise<WebhookEndpoint> {
    const { total, failed } = await q.recentOutcomes(this.store.db, row.environment_id, row.id, HEALTH_WINDOW);
    const health: WebhookEndpointHealth = {
      recentAttempts: total,
      recentFailures: failed,
      failureRate: total === 0 ? null : failed / total,
    };
    return { ...endpointView(row), health };
  }

  private async row(environment: Environment, endpointId: string): Promise<q.EndpointRow> {
    const row = await q.findEndpoint(this.store.db, environment.id, endpointId);
    if (!row) throw notFound(`Webhook endpoint ${endpointId}`);
    return row;
  }

  async update(environment: Environment, endpointId: string, input: EndpointInput): Promise<WebhookEndpoint> {
    if (input.url !== undefined) checkUrl(environment, input.url);
    const patch: Parameters<typeof q.updateEndpoint>[3] = { updated_at: this.now() };
    if (input.url !== undefined) patch.url = input.url;
    if (input.eventTypes !== undefined) patch.event_types = eventTypesColumn(input.eventTypes);
    if (input.description !== undefined) patch.description = input.description;
    if (input.enabled !== undefined) {
      patch.enabled = input.enabled ? 1 : 0;
      patch.disabled_reason = null;
    }
    const row = await q.updateEndpoint(this.store.db, environment.id, endpointId, patch);
    if (!row) throw notFound(`Webhook endpoint ${endpointId}`);
    this.worker.endpointsChanged(environment.id);
    return this.withHealth(row);
  }

  async delete(environment: Environment, endpointId: string): Promise<void> {
    const deleted = await this.store.db.transaction().execute((tx) => q.deleteEndpoint(tx, environment.id, endpointId));
    if (!deleted) throw notFound(`Webhook endpoint ${endpointId}`);
  }

  /** A new secret; the current one keeps signing alongside it for 24 hours. */
  async rotateSecret(environment: Environment, endpointId: string): Promise<{ secret: string }> {
    const current = await this.row(environment, endpointId);
    const secret = newWebhookSecret();
    const now = this.now();
    const row = await q.updateEndpoint(this.store.db, environment.id, endpointId, {
      secret: this.secrets.seal(environment.id, endpointId, secret),
      previous_secret: current.secret,
      previous_secret_until: now + PREVIOUS_SECRET_GRACE_MS,
      updated_at: now,
    });
    if (!row) throw notFound(`Webhook endpoint ${endpointId}`);
    return { secret };
  }

  async deliveries(environment: Environment, endpointId: string, options: { limit: number; beforeId?: string | undefined }) {
    await this.row(environment, endpointId);
    const rows = await q.listDeliveries(this.store.db, environment.id, endpointId, {
      limit: options.limit + 1,
      beforeId: options.beforeId,
    });
    const hasMore = rows.length > options.limit;
    const page = rows.slice(0, options.limit);
    return { data: page.map(deliveryView), last: hasMore ? page.at(-1)?.id : undefined };
  }

  /** Sends the delivery's message again now: a new attempt, or the queued one brought forward. */
  async retry(environment: Environment, endpointId: string, deliveryId: string): Promise<WebhookDelivery> {
    const endpoint = await this.row(environment, endpointId);
    if (endpoint.enabled !== 1) {
      throw apiError('conflict', `Webhook endpoint ${endpointId} is disabled. Enable it (PATCH with {"enabled": true}) before retrying.`);
    }
    const now = this.now();
    const result = await this.store.db.transaction().execute(async (tx) => {
      const delivery = await q.findDelivery(tx, environment.id, endpointId, deliveryId);
      if (!delivery) throw notFound(`Delivery ${deliveryId} of webhook endpoint ${endpointId}`);
      const queued = await q.findPendingAttempt(tx, environment.id, endpointId, delivery.event_id);
      if (queued) return (await q.rescheduleAttempt(tx, environment.id, queued.id, now)) ?? queued;
      const attempt: q.DeliveryRow = {
        environment_id: environment.id,
        id: newId('whd', environment.id),
        endpoint_id: endpointId,
        event_id: delivery.event_id,
        event_type: delivery.event_type,
        attempt: (await q.lastAttemptNumber(tx, environment.id, endpointId, delivery.event_id)) + 1,
        status: 'pending',
        response_status: null,
        error: null,
        next_attempt_at: now,
        locked_until: null,
        created_at: now,
      };
      await q.insertDelivery(tx, environment.id, attempt);
      return attempt;
    });
    this.worker.deliverNow();
    return deliveryView(result);
  }
}
