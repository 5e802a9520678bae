import type { Store } from '../db/index.js';
import { emailKeyOf } from '../identity/email.js';
import { ApiError } from '../lib/errors.js';
import type { Environment } from '../tenancy/settings.js';
import { listEmails } from './outbox.js';

type OutboxRow = Awaited<ReturnType<typeof listEmails>>[number];

export interface MailboxQuery {
  to?: string | undefined;
  limit: number;
  /** Only emails older than this one (the last of the previous page). */
  beforeId?: string | undefined;
}

/** A page of the outbox: `hasMore` when rows older than the last one remain. */
export interface MailboxPage<T> {
  emails: T[];
  hasMore: boolean;
}

function capturedView(row: OutboxRow) {
  return {
    id: row.id,
    to: row.to_address,
    subject: row.subject,
    text: row.text_body,
    html: row.html_body,
    kind: row.kind,
    createdAt: row.created_at,
  };
}

/** The `to` filter matches the address in any case, like every other look-up by address. */
function recipientFilter(to: string | undefined): string | undefined {
  return to === undefined ? undefined : emailKeyOf(to);
}

/** What the outbox shows: captured development mail to developers, delivery status to operators. */
export class Mailbox {
  constructor(private readonly store: Store) {}

  /** `GET /v1/dev/emails`: development environments only (production mail is delivered, not captured). */
  async captured(environment: Environment, query: MailboxQuery): Promise<MailboxPage<ReturnType<typeof capturedView>>> {
    if (environment.type !== 'development') {
      throw new ApiError(
        'not_found',
        "The email outbox exists only in development environments: production email is delivered, not captured. Use the development environment's secret key.",
      );
    }
    const rows = await listEmails(this.store.db, environment.id, {
      toKey: recipientFilter(query.to),
      statuses: ['captured'],
      limit: query.limit + 1,
      beforeId: query.beforeId,
    });
    return { emails: rows.slice(0, query.limit).map(capturedView), hasMore: rows.length > query.limit };
  }

  /** The platform's view of an environment's outbox, with delivery status. */
  async deliveries(environment: Environment, query: MailboxQuery) {
    const rows = await listEmails(this.store.db, environment.id, {
      toKey: recipientFilter(query.to),
      limit: query.limit + 1,
      beforeId: query.beforeId,
    });
    const emails = rows.slice(0, query.limit).map((r) => ({
      ...capturedView(r),
      // Production bodies hold live one-time secrets until sent; operators see the delivery, not the secret.
      ...(environment.type === 'production' ? { text: '', html: '' } : {}),
      status: r.status,
      attempts: r.attempts,
      lastError: r.last_error,
      sentAt: r.sent_at,
    }));
    return { emails, hasMore: rows.length > query.limit };
  }
}
