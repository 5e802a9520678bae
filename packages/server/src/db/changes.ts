import { AsyncLocalStorage } from 'node:async_hooks';
import type { Kysely, Transaction } from 'kysely';
import type { Database } from './schema.js';
import { parseChange, type Change } from '../lib/change.js';

export { parseChange, type Change };

type Listener = (change: Change) => void;

/**
 * The relays one unit of work (a request) started. Its answer waits for these only: a slow
 * announcement of another request must not hold it up.
 */
export type AnnouncementScope = Set<Promise<void>>;
const scopes = new AsyncLocalStorage<AnnouncementScope>();

/** Runs `work` with its announcements collected in `scope` (see ChangeFeed.settled). */
export function withAnnouncementScope<T>(scope: AnnouncementScope, work: () => T): T {
  return scopes.run(scope, work);
}
/** Forwards a change to other nodes; returns a promise while delivery is under way (see `settled`). */
type Relay = (change: Change) => unknown;

/**
 * Changes within one process, per database: writers announce here once their change is committed,
 * and every cache over that database listens. A Redis link relays the same announcements to the
 * other nodes (see app.ts).
 */
export class ChangeFeed {
  private readonly local = new Set<Listener>();
  private readonly remote = new Set<Relay>();
  /** Relays under way; each settles (never rejects) once its change is out or known lost. */
  private readonly relaying = new Set<Promise<void>>();
  private readonly outbox = new Set<(environmentIds: readonly string[]) => void>();

  /** Hears every change, made here or on another node. */
  subscribe(listener: Listener): () => void {
    this.local.add(listener);
    return () => this.local.delete(listener);
  }

  /**
   * Hears that this process committed webhook events (the outbox, db/events.ts), so that its
   * worker sends them now rather than at its next poll. Not relayed: each node sends its own.
   */
  onEventsCommitted(listener: (environmentIds: readonly string[]) => void): () => void {
    this.outbox.add(listener);
    return () => this.outbox.delete(listener);
  }

  eventsCommitted(environmentIds: readonly string[]): void {
    for (const listener of this.outbox) listener(environmentIds);
  }

  /** Hears changes made in this process, to forward them to other nodes. */
  relay(listener: Relay): () => void {
    this.remote.add(listener);
    return () => this.remote.delete(listener);
  }

  /**
   * Changes committed in this process. Every listener hears every change even when one throws:
   * a cache skipped because another failed would serve the old row. The failures are rethrown after.
   */
  publish(...changes: Change[]): void {
    const failures: unknown[] = [];
    for (const change of changes) {
      notify(this.local, change, failures);
      for (const relay of this.remote) {
        try {
          const sent = relay(change);
          if (sent instanceof Promise) this.track(sent);
        } catch (error) {
          failures.push(error);
        }
      }
    }
    throwFailures(failures);
  }

  private track(sent: Promise<unknown>): void {
    const scope = scopes.getStore();
    const forget = () => {
      this.relaying.delete(settled);
      scope?.delete(settled);
    };
    const settled: Promise<void> = sent.then(forget, forget);
    this.relaying.add(settled);
    scope?.add(settled);
  }

  /**
   * Resolves once every relay of `scope` (by default, every relay of this process) started before
   * the call has finished (sent or given up); undefined when none is under way. A response waits
   * for its own request's, so the changes it made are out before the client hears back (see
   * app/caches.ts).
   */
  settled(scope: AnnouncementScope = this.relaying): Promise<unknown> | undefined {
    if (scope.size === 0) return undefined;
    return Promise.all(scope);
  }

  /** A change announced by another node. */
  deliver(change: Change): void {
    const failures: unknown[] = [];
    notify(this.local, change, failures);
    throwFailures(failures);
  }
}

function notify(listeners: Iterable<Listener>, change: Change, failures: unknown[]): void {
  for (const listener of listeners) {
    try {
      listener(change);
    } catch (error) {
      failures.push(error);
    }
  }
}

function throwFailures(failures: unknown[]): void {
  if (failures.length === 1) throw failures[0];
  if (failures.length > 1) throw new AggregateError(failures, `${failures.length} change listeners failed`);
}

type Db = Kysely<Database> | Transaction<Database>;

const feeds = new WeakMap<Kysely<Database>, ChangeFeed>();
/** What a transaction opened with inTransaction has to announce once it commits. */
const pending = new WeakMap<Transaction<Database>, { changes: Change[]; events: string[]; committed: (() => void)[] }>();

/** The change feed of a database handle (the store's `db`). */
export function changeFeed(db: Kysely<Database>): ChangeFeed {
  let feed = feeds.get(db);
  if (!feed) {
    feed = new ChangeFeed();
    feeds.set(db, feed);
  }
  return feed;
}

/**
 * Announces a change made through `db`. Outside a transaction the statement has committed, so it
 * goes out at once; inside one it waits for the commit (see inTransaction), because a cache that
 * dropped the row earlier could be refilled with the old row by a read on another connection.
 */
export function announce(db: Db, change: Change): void {
  if (!db.isTransaction) return changeFeed(db).publish(change);
  const announced = pending.get(db as Transaction<Database>);
  if (!announced) {
    throw new Error('A change to cached rows was made in a transaction not opened with inTransaction(), so it could not be announced.');
  }
  announced.changes.push(change);
}

/** Tells this node's webhook worker that `db` wrote an event of an environment: at once outside a transaction, else at its commit. */
export function eventRecorded(db: Db, environmentId: string): void {
  if (!db.isTransaction) return changeFeed(db).eventsCommitted([environmentId]);
  const announced = pending.get(db as Transaction<Database>);
  if (!announced) throw new Error('A webhook event was recorded in a transaction not opened with inTransaction() (see atomically()).');
  announced.events.push(environmentId);
}

/** Runs `then` once `db`'s transaction has committed (at once outside one): a wake for a worker, say. */
export function afterCommit(db: Db, then: () => void): void {
  if (!db.isTransaction) return then();
  const announced = pending.get(db as Transaction<Database>);
  if (!announced) throw new Error('afterCommit() needs a transaction opened with inTransaction().');
  announced.committed.push(then);
}

/** Runs `work` in a transaction and, once it has committed, announces the changes made in it. */
export async function inTransaction<T>(db: Kysely<Database>, work: (tx: Transaction<Database>) => Promise<T>): Promise<T> {
  const announced = { changes: [] as Change[], events: [] as string[], committed: [] as (() => void)[] };
  const result = await db.transaction().execute((tx) => {
    pending.set(tx, announced);
    return work(tx);
  });
  const feed = changeFeed(db);
  try {
    feed.publish(...announced.changes);
  } finally {
    // After the caches' announcements, which matter more; a wake is only a hurry (polls find the events).
    if (announced.events.length > 0) feed.eventsCommitted(announced.events);
    for (const then of announced.committed) then();
  }
  return result;
}
