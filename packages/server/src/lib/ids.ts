import { newId } from './crypto.js';

/**
 * An environment id that came from a resolved credential or a looked-up environment, never straight
 * from a request. Every query of a tenant table takes one, so tenant scope is a type, not a habit:
 * passing a user id, or an unchecked path parameter, where the environment belongs does not compile.
 * The runtime side is proved by the test suite's guard (db/tenant-scope.ts): each such query also
 * filters on it.
 */
export type EnvironmentId = string & { readonly __brand: 'EnvironmentId' };

export function newEnvironmentId(): EnvironmentId {
  return newId('env') as EnvironmentId;
}

/**
 * The environment a credential names (an access token's issuer). Look-ups made with it are scoped
 * to it, and the credential is refused unless that environment's own key confirms it.
 */
export function claimedEnvironmentId(id: string): EnvironmentId {
  return id as EnvironmentId;
}
