import { CreateUserBody, IMPORT_MAX_USERS, type ImportUsersResult } from '@gatehouse/contract';
import { isUniqueViolation } from '../db/index.js';
import { validationError, type ValidationIssue } from '../http/error-handler.js';
import { bodyValidator } from '../http/validation.js';
import { ApiError, apiError } from '../lib/errors.js';
import type { Environment } from '../tenancy/settings.js';
import type { CreateUserInput, IdentityService } from './service.js';
import { userView } from './views.js';

type RowResult = ImportUsersResult['data'][number];

/** Rows in flight at once: enough to overlap round trips and argon2 work on the thread pool. */
const CONCURRENCY = 4;

let validateRow: ReturnType<typeof bodyValidator> | undefined;

function checkRow(row: unknown, index: number): CreateUserInput {
  validateRow ??= bodyValidator(CreateUserBody);
  if (!validateRow(row)) throw validationError((validateRow.errors ?? []) as ValidationIssue[], `user at index ${index}`);
  return row as CreateUserInput;
}

function errorOf(error: unknown): { code: string; message: string; details?: unknown } {
  if (error instanceof ApiError) return error.toBody().error;
  return { code: 'internal', message: 'This row could not be stored because of an error on our side; it was logged. Send the row again.' };
}

/**
 * POST /v1/users/import: each row is created as POST /v1/users would create it, on its own, so one
 * bad row never blocks the others. A row whose externalId already has a user answers that user
 * (`created: false`) and changes nothing, so an interrupted import can simply be sent again.
 */
export async function importUsers(
  identity: IdentityService,
  environment: Environment,
  rows: readonly unknown[],
  log: (error: unknown) => void,
): Promise<RowResult[]> {
  if (rows.length > IMPORT_MAX_USERS) {
    throw apiError('invalid_request', `At most ${IMPORT_MAX_USERS} users per call (got ${rows.length}); split the import into several calls.`, {
      fields: ['users'],
    });
  }
  const results: RowResult[] = new Array(rows.length);

  const one = async (index: number): Promise<RowResult> => {
    let input: CreateUserInput | undefined;
    try {
      input = checkRow(rows[index], index);
      if (typeof input.externalId === 'string') {
        const existing = await identity.findByExternalId(environment, input.externalId);
        if (existing) return { index, user: userView(existing), created: false };
      }
      return { index, user: await identity.createUser(environment, input), created: true };
    } catch (error) {
      // Two rows (or two imports) with one externalId raced: the loser (refused on the externalId, or
      // on the email the winner just took) answers the winner's user.
      const conflict = (error instanceof ApiError && error.code === 'conflict') || isUniqueViolation(error);
      if (typeof input?.externalId === 'string' && conflict) {
        const existing = await identity.findByExternalId(environment, input.externalId);
        if (existing) return { index, user: userView(existing), created: false };
      }
      if (!(error instanceof ApiError)) log(error);
      return { index, error: errorOf(error) };
    }
  };

  let next = 0;
  const worker = async () => {
    while (next < rows.length) {
      const index = next++;
      results[index] = await one(index);
    }
  };
  await Promise.all(Array.from({ length: Math.min(CONCURRENCY, rows.length) }, worker));
  return results;
}
