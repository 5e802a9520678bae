import { CreateUserBody, IMPORT_MAX_USERS, type ImportUsersResult } from '@gatehouse/contract';
import { isUniqueViolation } from '../db/index.js';
import { validationError, type ValidationIssue } from '../http/error-handler.js';
import { bodyValidator } from '../http/validation.js';
import { ApiError, apiError } from '../lib/errors.js';
import type { Environment } from '../tenancy/settings.js';
import type { UserRow } from './queries.js';
import type { CreateUserInput, IdentityService } from './service.js';
import { emailTaken, passwordHashOf } from './user-input.js';
import { userView } from './views.js';

type RowResult = ImportUsersResult['data'][number];

/** Rows prepared at once: enough to keep argon2 (plaintext passwords) busy on the thread pool. */
const CONCURRENCY = 4;
/** Rows stored per transaction. */
const BATCH = 100;

async function eachConcurrently(count: number, work: (index: number) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < count) await work(next++);
  };
  await Promise.all(Array.from({ length: Math.min(CONCURRENCY, count) }, worker));
}

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
 * POST /v1/users/import: each row is checked as POST /v1/users would check it, on its own, so one
 * bad row never blocks the others; the good ones are stored a hundred to a transaction. A row whose
 * externalId already has a user answers that user (`created: false`) and changes nothing, so an
 * interrupted import can simply be sent again.
 */
export async function importUsers(
  identity: IdentityService,
  environment: Environment,
  rows: readonly unknown[],
  log: (error: unknown) => void,
): Promise<RowResult[]> {
  if (rows.length > IMPORT_MAX_USERS) {
    throw apiError(
      'invalid_request',
      `At most ${IMPORT_MAX_USERS} users per call (got ${rows.length}); split the import into several calls.`,
      {
        fields: ['users'],
      },
    );
  }
  const results: RowResult[] = new Array(rows.length);

  /** One row as POST /v1/users stores it: for repeats within the call and batches that lost a race. */
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

  // Checked and prepared first (passwords hashed, digests parsed), rows in flight at once.
  const prepared = new Map<number, UserRow>();
  // Imported TOTP secrets, by new user id: stored in the batch's transaction with their users.
  const totpSecrets = new Map<string, string>();
  await eachConcurrently(rows.length, async (index) => {
    try {
      const input = checkRow(rows[index], index);
      const row = await identity.newUserRow(environment, input, await passwordHashOf(input));
      prepared.set(index, row);
      if (input.totpSecret !== undefined) totpSecrets.set(row.id, input.totpSecret);
    } catch (error) {
      if (!(error instanceof ApiError)) log(error);
      results[index] = { index, error: errorOf(error) };
    }
  });

  // Two look-ups for the whole call: externalIds already imported, addresses already taken.
  const candidates = [...prepared.entries()];
  const { byExternalId, takenEmailKeys } = await identity.importLookups(
    environment,
    [...new Set(candidates.flatMap(([, row]) => (row.external_id === null ? [] : [row.external_id])))],
    [...new Set(candidates.map(([, row]) => row.email_key))],
  );
  const fresh: [number, UserRow][] = [];
  const oneByOne: number[] = [];
  const claimedIds = new Set<string>();
  const claimedKeys = new Set<string>();
  const takenWithExternalId: [number, UserRow][] = [];
  for (const [index, row] of candidates) {
    const existing = row.external_id === null ? undefined : byExternalId.get(row.external_id);
    if (existing) results[index] = { index, user: userView(existing), created: false };
    else if (takenEmailKeys.has(row.email_key)) {
      if (row.external_id === null) results[index] = { index, error: emailTaken().toBody().error };
      else takenWithExternalId.push([index, row]);
    } else if ((row.external_id !== null && claimedIds.has(row.external_id)) || claimedKeys.has(row.email_key)) {
      // A repeat within this call: judged after the first is stored, as a row of its own.
      oneByOne.push(index);
    } else {
      if (row.external_id !== null) claimedIds.add(row.external_id);
      claimedKeys.add(row.email_key);
      fresh.push([index, row]);
    }
  }

  // The two look-ups are two snapshots: a racing import of the same externalId may have committed
  // between them, so that its address looked taken and its externalId unknown. Looked up again now
  // that the address is seen taken: a user found is the row's own; otherwise a stranger holds it.
  if (takenWithExternalId.length > 0) {
    const { byExternalId: again } = await identity.importLookups(
      environment,
      [...new Set(takenWithExternalId.map(([, row]) => row.external_id!))],
      [],
    );
    for (const [index, row] of takenWithExternalId) {
      const existing = again.get(row.external_id!);
      results[index] = existing ? { index, user: userView(existing), created: false } : { index, error: emailTaken().toBody().error };
    }
  }

  // Stored in transactions of BATCH rows: one commit each, not one per row. A batch that loses a
  // race (a concurrent writer took an address or externalId since the look-up) is undone whole and
  // its rows go one by one, where each gets its own answer.
  for (let start = 0; start < fresh.length; start += BATCH) {
    const batch = fresh.slice(start, start + BATCH);
    try {
      await identity.insertNewUsers(
        environment,
        batch.map(([, row]) => row),
        totpSecrets,
      );
      for (const [index, row] of batch) results[index] = { index, user: userView(row), created: true };
    } catch (error) {
      if (!isUniqueViolation(error)) log(error);
      oneByOne.push(...batch.map(([index]) => index));
    }
  }
  for (const index of oneByOne.sort((a, b) => a - b)) results[index] = await one(index);
  return results;
}
