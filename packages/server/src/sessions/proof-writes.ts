import type { CompiledQuery } from 'kysely';

/**
 * Writes that make a sign-in's proof count (a passkey's: its challenge spent, its counter moved),
 * committed with the session or not at all: each must change exactly one row, else nothing is
 * written and `refusal()` is thrown.
 */
export interface ProofWrites {
  writes: readonly CompiledQuery[];
  refusal: () => Error;
}
