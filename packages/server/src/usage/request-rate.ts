import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';

const MINUTE = 60_000;
const SLOTS = 60;

/**
 * Requests per minute over the last hour, per environment, counted in this node's memory: the
 * console's chart of recent traffic. Sixty slots per environment, reused as the minutes pass, so it
 * costs a few hundred bytes per active environment and no write anywhere.
 */
export class RequestRate {
  private readonly slots = new Map<string, { minute: number[]; count: number[] }>();

  constructor(private readonly now: () => number) {}

  hit(environmentId: string): void {
    const minute = Math.floor(this.now() / MINUTE);
    let ring = this.slots.get(environmentId);
    if (!ring) {
      ring = { minute: new Array<number>(SLOTS).fill(-1), count: new Array<number>(SLOTS).fill(0) };
      this.slots.set(environmentId, ring);
    }
    const i = minute % SLOTS;
    if (ring.minute[i] !== minute) {
      ring.minute[i] = minute;
      ring.count[i] = 0;
    }
    ring.count[i]! += 1;
  }

  /** The last 60 minutes, oldest first, the current minute last. */
  lastHour(environmentId: string): { minute: number; requests: number }[] {
    const current = Math.floor(this.now() / MINUTE);
    const ring = this.slots.get(environmentId);
    const out: { minute: number; requests: number }[] = [];
    for (let m = current - SLOTS + 1; m <= current; m++) {
      const i = m % SLOTS;
      out.push({ minute: m * MINUTE, requests: ring && ring.minute[i] === m ? ring.count[i]! : 0 });
    }
    return out;
  }
}

/** Counts every answered request authenticated to an environment (PK, SK or access token). */
export const requestRatePlugin = fp<{ rate: RequestRate }>(
  async (app: FastifyInstance, { rate }) => {
    // A callback, not an async function: no promise per request on every route.
    app.addHook('onResponse', (request, _reply, done) => {
      const auth = request.auth;
      if (auth && auth.kind !== 'platform') rate.hit(auth.environment.id);
      done();
    });
  },
  { name: 'gatehouse-request-rate' },
);
