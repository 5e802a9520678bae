import type { FastifyInstance } from 'fastify';
import type { AppOptions } from './options.js';
import { KeyCache } from '../apikeys/cache.js';
import { changeFeed, parseChange, withAnnouncementScope, type AnnouncementScope } from '../db/changes.js';
import { RedisLink } from '../lib/redis.js';
import { newMeOrganizationsCache } from '../organizations/service.js';
import { newSessionCache } from '../sessions/session-record.js';
import { TenancyCache } from '../tenancy/cache.js';

export const DEFAULT_REDIS_PREFIX = 'gh:';

/** The Redis link shared by the limiter, the throttle and the caches; none without REDIS_URL. */
export async function connectRedis(app: FastifyInstance, options: AppOptions): Promise<RedisLink | undefined> {
  let redis: RedisLink | undefined;
  if (options.redis) {
    redis = new RedisLink({
      url: options.redis.url,
      prefix: options.redis.prefix ?? DEFAULT_REDIS_PREFIX,
      log: app.log,
      ...(options.redis.commandTimeoutMs ? { commandTimeoutMs: options.redis.commandTimeoutMs } : {}),
      ...(options.redis.heartbeatMs ? { heartbeatMs: options.redis.heartbeatMs } : {}),
    });
    const link = redis;
    app.addHook('onClose', () => link.close());
    await link.connect();
  }

  return redis;
}

export type Caches = ReturnType<typeof installCaches>;

/**
 * The per-node caches of credentials, sessions and organization lists, each dropping what a
 * committed change touched, on this node at once and on the others through Redis. While changes may
 * be missed the session caches serve nothing.
 */
export function installCaches(app: FastifyInstance, options: AppOptions, redis: RedisLink | undefined) {
  const cache = options.cache === false ? undefined : new TenancyCache(options.cache);
  const sessionCache = options.cache === false ? undefined : newSessionCache(options.cache?.rows);
  const meOrganizationsCache = options.cache === false ? undefined : newMeOrganizationsCache(options.cache?.rows);
  // API keys (issue 39): verified keys, trusted and dropped like sessions.
  const apiKeyCache = options.cache === false ? undefined : new KeyCache(options.cache?.rows);
  if (cache && sessionCache && meOrganizationsCache && apiKeyCache) {
    const feed = changeFeed(options.store.db);
    const unsubscribe = feed.subscribe((change) => {
      if (change.kind === 'environment') cache.invalidateEnvironment(change.environmentId);
      sessionCache.apply(change);
      meOrganizationsCache.apply(change);
      apiKeyCache.apply(change);
    });
    app.addHook('onClose', async () => void unsubscribe());
    // Untrusted (changes may be missed), the session caches serve nothing, since a revoked session
    // must be refused at once; credentials are still cached, for 1 s.
    const setTrusted = (trusted: boolean) => {
      cache.setTrusted(trusted);
      sessionCache.setTrusted(trusted);
      meOrganizationsCache.setTrusted(trusted);
      apiKeyCache.setTrusted(trusted);
    };
    if (redis) {
      const link = redis;
      const unrelay = feed.relay((change) => link.publishChange(change));
      // Changes may be missed while Redis is away or the subscriber hears nothing.
      const hearsChanges = () => link.state === 'ok' && link.hearing;
      link.on('change', (message: string) => {
        const change = parseChange(message);
        if (change) return feed.deliver(change);
        // Not a change this version understands: whatever it was, forget everything cached.
        app.log.warn({ message: message.slice(0, 200) }, 'Unreadable change announcement from Redis; caches cleared');
        setTrusted(hearsChanges());
      });
      link.on('state', () => setTrusted(hearsChanges()));
      link.on('hearing', () => setTrusted(hearsChanges()));
      setTrusted(hearsChanges());
      app.addHook('onClose', async () => void unrelay());
      // commit → announced → answered: a response waits until the changes its own request made
      // are out, and for no other request's. The scope is entered again before the handler, whose
      // continuation after body parsing may not carry the context of onRequest.
      const scopeOf = new WeakMap<object, AnnouncementScope>();
      app.addHook('onRequest', (request, _reply, done) => {
        const scope: AnnouncementScope = new Set();
        scopeOf.set(request, scope);
        withAnnouncementScope(scope, done);
      });
      app.addHook('preHandler', (request, _reply, done) => {
        const scope = scopeOf.get(request);
        if (!scope) return done();
        withAnnouncementScope(scope, done);
      });
      app.addHook('onSend', (request, _reply, payload, done) => {
        const scope = scopeOf.get(request);
        const settled = scope && feed.settled(scope);
        if (!settled) return done(null, payload);
        settled.then(() => done(null, payload));
      });
    } else {
      // Without Redis, other nodes sharing PostgreSQL cannot tell this one about their changes.
      setTrusted(options.store.dialect === 'sqlite');
    }
  }

  return { cache, sessionCache, meOrganizationsCache, apiKeyCache };
}
