/** `@gatehouse/nextjs/server`: for middleware, server components, route handlers and server actions. */
export { auth, currentUser, type Auth, type ProtectOptions } from './server/auth.js';
export { gatehouseMiddleware, createRouteMatcher, type MiddlewareAuth, type MiddlewareHandler } from './server/middleware.js';
export {
  SESSION_COOKIE,
  type AuthObject,
  type SignedInAuthObject,
  type SignedOutAuthObject,
  type SignedOutReason,
} from './server/authenticate.js';
export type { GatehouseNextOptions } from './server/config.js';
export type { HasCheck, GatehouseClaims, User } from '@gatehouse/backend';
