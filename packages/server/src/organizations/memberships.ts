import { isForeignKeyViolation, isUniqueViolation } from '../db/index.js';
import type { ApiError } from '../lib/errors.js';
import type { EnvironmentId } from '../lib/ids.js';
import type { Tx } from './access.js';
import * as q from './queries.js';

export interface NewMembership {
  organizationId: string;
  userId: string;
  /** The role, or how to find it: decided only once the user is known not to be a member. */
  role: string | (() => Promise<string>);
  now: number;
}

/**
 * The one place a user joins an organization (adding a member, accepting an invitation or a
 * membership request), in the caller's transaction under the organization's lock. A user who is a
 * member already is refused with `alreadyMember` (found, or a racing insert won the unique index);
 * without one they are left as they are. Answers the role given, or undefined when nothing changed.
 */
export async function addMembership(
  tx: Tx,
  environmentId: EnvironmentId,
  member: NewMembership,
  refusals: { alreadyMember?: () => ApiError; userGone?: () => ApiError } = {},
): Promise<string | undefined> {
  if (await q.findMembership(tx, environmentId, member.organizationId, member.userId)) {
    if (refusals.alreadyMember) throw refusals.alreadyMember();
    return undefined;
  }
  const role = typeof member.role === 'string' ? member.role : await member.role();
  try {
    await q.insertMembership(tx, environmentId, {
      organization_id: member.organizationId,
      user_id: member.userId,
      role,
      created_at: member.now,
      updated_at: member.now,
    });
  } catch (error) {
    if (refusals.alreadyMember && isUniqueViolation(error)) throw refusals.alreadyMember();
    // Deleted after it was read: the deletion held the user row, so the insert waited and failed.
    if (refusals.userGone && isForeignKeyViolation(error)) throw refusals.userGone();
    throw error;
  }
  return role;
}
