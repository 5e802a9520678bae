/**
 * A committed change to rows that nodes cache (credentials, sessions, users, organization lists).
 * `organizations` without a user means every organization list of the environment.
 */
export type Change =
  | { kind: 'environment'; environmentId: string }
  | { kind: 'session'; environmentId: string; sessionId: string }
  | { kind: 'user'; environmentId: string; userId: string }
  | { kind: 'organizations'; environmentId: string; userId?: string }
  /** An API key revoked: nodes that cached its verification drop it (apikeys/cache.ts). */
  | { kind: 'apiKey'; environmentId: string; keyId: string };

const KINDS = new Set(['environment', 'session', 'user', 'organizations', 'apiKey']);

/** Parses a change relayed by another node; undefined when it is not one. */
export function parseChange(message: string): Change | undefined {
  let value: unknown;
  try {
    value = JSON.parse(message);
  } catch {
    return undefined;
  }
  if (typeof value !== 'object' || value === null) return undefined;
  const { kind, environmentId, sessionId, userId, keyId } = value as Record<string, unknown>;
  if (typeof kind !== 'string' || !KINDS.has(kind) || typeof environmentId !== 'string') return undefined;
  switch (kind) {
    case 'environment':
      return { kind, environmentId };
    case 'session':
      return typeof sessionId === 'string' ? { kind, environmentId, sessionId } : undefined;
    case 'user':
      return typeof userId === 'string' ? { kind, environmentId, userId } : undefined;
    case 'apiKey':
      return typeof keyId === 'string' ? { kind, environmentId, keyId } : undefined;
    default:
      if (userId === undefined) return { kind: 'organizations', environmentId };
      return typeof userId === 'string' ? { kind: 'organizations', environmentId, userId } : undefined;
  }
}
