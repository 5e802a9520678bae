import type { FastifyBaseLogger } from 'fastify';
import type { Store } from '../db/index.js';
import { claimDue, markFailedAttempt, markSent, releaseClaim } from './outbox.js';
import type { MailTransport } from './transport.js';
import { graceTimer, STOP_GRACE_MS } from '../lib/grace.js';

export interface WorkerOptions {
  clock?: () => number;
  pollMs?: number;
  lockMs?: number;
  batchSize?: number;
  maxAttempts?: number;
  log?: Pick<FastifyBaseLogger, 'warn' | 'error'>;
}

export { graceTimer, STOP_GRACE_MS };

/** Retry delay after the n-th failed attempt: 5 s, 10 s, 20 s … capped at 30 minutes. */
export function backoffMs(attempts: number): number {
  return Math.min(5_000 * 2 ** Math.max(0, attempts - 1), 30 * 60_000);
}

/**
 * Delivers pending outbox messages outside any request. Delivery is at least once: a message is
 * marked sent only after the transport accepted it, and a claim expires (lockMs) if its worker died,
 * so a crash between claim and send delays a message but never loses it. A worker that stops (a node
 * shutting down) gives back what it claimed and has not sent, so another node sends it at once.
 */
export class OutboxWorker {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<number> | undefined;
  private stopped = true;
  /** Set by stop(); tests drive a never-started (stopped) worker by hand, so this is not `stopped`. */
  private stopping = false;
  /** Claimed messages not yet finished, with their claim's lease. */
  private readonly claimed = new Map<string, { environmentId: Parameters<typeof releaseClaim>[1]; lease: number }>();
  private readonly clock: () => number;
  private readonly pollMs: number;
  private readonly lockMs: number;
  private readonly batchSize: number;
  readonly maxAttempts: number;

  constructor(
    private readonly store: Store,
    private readonly transport: MailTransport,
    private readonly options: WorkerOptions = {},
  ) {
    this.clock = options.clock ?? Date.now;
    this.pollMs = options.pollMs ?? 1000;
    this.lockMs = options.lockMs ?? 60_000;
    this.batchSize = options.batchSize ?? 20;
    this.maxAttempts = options.maxAttempts ?? 10;
  }

  start(): void {
    this.stopped = false;
    this.stopping = false;
    // The first run waits for the first poll: a starting node answers its first requests (health checks) first.
    this.schedule(this.pollMs);
  }

  /**
   * Stops claiming. A send under way may finish within `graceMs`; then every message this worker
   * claimed and did not finish is given back, for another node (or this one's next start) to send.
   */
  async stop(graceMs = STOP_GRACE_MS): Promise<void> {
    this.stopped = true;
    this.stopping = true;
    clearTimeout(this.timer);
    const grace = graceTimer(graceMs);
    await Promise.race([this.running?.catch(() => undefined), grace.elapsed]);
    grace.cancel();
    await this.releaseClaimed();
  }

  private async releaseClaimed(): Promise<void> {
    const claimed = [...this.claimed];
    this.claimed.clear();
    for (const [id, claim] of claimed) {
      try {
        await releaseClaim(this.store.db, claim.environmentId, id, claim.lease);
      } catch (error) {
        // The claim then runs out by itself (lockMs): the message is late, not lost.
        this.options.log?.warn({ err: error, messageId: id }, 'could not give an email back at shutdown');
      }
    }
  }

  /** Asks for a run soon, e.g. right after a request committed a message. */
  wake(): void {
    if (!this.stopped) this.schedule(0);
  }

  private schedule(delay: number): void {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.tick(), delay);
    this.timer.unref();
  }

  private async tick(): Promise<void> {
    if (this.running) return;
    try {
      await this.runOnce();
    } catch (error) {
      this.options.log?.error({ err: error }, 'outbox worker run failed');
    }
    if (!this.stopped) this.schedule(this.pollMs);
  }

  /** Claims and delivers one batch; returns how many messages it handled. */
  runOnce(): Promise<number> {
    this.running ??= this.deliverBatch().finally(() => {
      this.running = undefined;
    });
    return this.running;
  }

  /** Runs batches until nothing is due. */
  async drain(): Promise<void> {
    while ((await this.runOnce()) > 0);
  }

  private async deliverBatch(): Promise<number> {
    const now = this.clock();
    const claimed = await claimDue(this.store.db, {
      now,
      lockMs: this.lockMs,
      batchSize: this.batchSize,
      dialect: this.store.dialect,
    });
    for (const message of claimed) this.claimed.set(message.id, { environmentId: message.environment_id, lease: message.locked_until! });
    for (const message of claimed) {
      // Stopping: what is left of the batch is given back by stop(), unsent.
      if (this.stopping) break;
      if (!this.claimed.has(message.id)) continue;
      try {
        await this.transport.send({ to: message.to_address, subject: message.subject, text: message.text_body, html: message.html_body });
        await markSent(this.store.db, message.environment_id, message.id, this.clock());
      } catch (error) {
        const giveUp = message.attempts >= this.maxAttempts;
        const reason = error instanceof Error ? error.message : String(error);
        this.options.log?.warn({ messageId: message.id, attempts: message.attempts, giveUp, reason }, 'email delivery failed');
        await markFailedAttempt(this.store.db, message.environment_id, message.id, {
          error: reason,
          giveUp,
          nextAttemptAt: this.clock() + backoffMs(message.attempts),
        });
      } finally {
        this.claimed.delete(message.id);
      }
    }
    return claimed.length;
  }
}
