import { Type, type Static } from 'typebox';
import { define } from './registry.js';

const Check = Type.Union([Type.Literal('ok'), Type.Literal('degraded'), Type.Literal('down')]);
const RedisCheck = Type.Union([Type.Literal('ok'), Type.Literal('degraded'), Type.Literal('disabled')], {
  description: 'degraded: Redis is unreachable, so rate limits are per node and caches short-lived; disabled: no REDIS_URL',
});

export const Health = define('Health', Type.Object({ status: Check, database: Check, redis: RedisCheck }));
export type Health = Static<typeof Health>;

/** The readiness probe's answer; a node that is not ready answers `503 unavailable` instead. */
export const Readiness = define(
  'Readiness',
  Type.Object({
    status: Type.Literal('ready'),
    database: Type.Literal('ok'),
    redis: Type.Union([Type.Literal('ok'), Type.Literal('disabled')], { description: 'disabled: no REDIS_URL' }),
    migrations: Type.Literal('ok'),
  }),
);
export type Readiness = Static<typeof Readiness>;
