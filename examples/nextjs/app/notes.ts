/**
 * The example's "database": one note per user, in memory. On globalThis, because Next.js bundles
 * pages and route handlers separately, each with its own copy of this module.
 */
const store = globalThis as typeof globalThis & { __exampleNotes?: Map<string, string> };
export const notes = (store.__exampleNotes ??= new Map<string, string>());
