import { createRequire } from 'node:module';

/**
 * Loads a CommonJS dependency when it is first needed, synchronously. A deployment pays at start only
 * for the parts it configures: the embedded default never loads PostgreSQL's, Redis's or SMTP's
 * client (about a third of the start-up time and memory when they were imported at the top).
 */
export const requireLazily = createRequire(import.meta.url);
