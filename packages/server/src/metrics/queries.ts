import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import { crossTenant } from '../db/tenant-scope.js';

export interface OutboxGauge {
  depth: number;
  /** Milliseconds since the oldest waiting item was created; 0 when none waits. */
  oldestAgeMs: number;
}

function gauge(row: { n: number | string; oldest: number | string | null } | undefined, now: number): OutboxGauge {
  const oldest = row?.oldest === null || row?.oldest === undefined ? undefined : Number(row.oldest);
  return { depth: Number(row?.n ?? 0), oldestAgeMs: oldest === undefined ? 0 : Math.max(0, now - oldest) };
}

/** Email waiting to be delivered (production mail; development mail is captured, never queued). */
export async function emailOutbox(db: Kysely<Database>, now: number): Promise<OutboxGauge> {
  const row = await db
    .selectFrom('email_outbox')
    .select((eb) => [eb.fn.countAll<number | string>().as('n'), eb.fn.min<number | null>('created_at').as('oldest')])
    .where('status', '=', 'pending')
    .modifyEnd(crossTenant('the metrics scrape reports the whole outbox'))
    .executeTakeFirst();
  return gauge(row, now);
}

/** Webhook attempts waiting to be sent, and events not yet fanned out to their endpoints. */
export async function webhookOutbox(db: Kysely<Database>, now: number): Promise<OutboxGauge> {
  const [deliveries, events] = await Promise.all([
    db
      .selectFrom('webhook_deliveries')
      .select((eb) => [eb.fn.countAll<number | string>().as('n'), eb.fn.min<number | null>('created_at').as('oldest')])
      .where('status', '=', 'pending')
      .modifyEnd(crossTenant('the metrics scrape reports the whole outbox'))
      .executeTakeFirst(),
    db
      .selectFrom('webhook_events')
      .select((eb) => [eb.fn.countAll<number | string>().as('n'), eb.fn.min<number | null>('created_at').as('oldest')])
      .where('fanned_out', '=', 0)
      .modifyEnd(crossTenant('the metrics scrape reports the whole outbox'))
      .executeTakeFirst(),
  ]);
  const a = gauge(deliveries, now);
  const b = gauge(events, now);
  return { depth: a.depth + b.depth, oldestAgeMs: Math.max(a.oldestAgeMs, b.oldestAgeMs) };
}
