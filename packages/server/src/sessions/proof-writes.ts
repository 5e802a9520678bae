import type { CompiledQuery, Transaction } from 'kysely';

/**
 * Writes that make a sign-in's proof count (a passkey's: its challenge spent, its counter moved),
 * committed with the session or not at all: each must change exactly one row, else nothing is
 * written and `refusal()` is thrown.
 */
export interface ProofWrites {
  writes: readonly CompiledQuery[];
  refusal: () => Error;
}

/** Runs the writes in order in `tx`; whether each changed exactly one row (it stops at the first that did not). */
export async function proofHolds(tx: Pick<Transaction<unknown>, 'executeQuery'>, writes: readonly CompiledQuery[]): Promise<boolean> {
  for (const write of writes) if (Number((await tx.executeQuery(write)).numAffectedRows ?? 0n) !== 1) return false;
  return true;
}
