import type { CompiledQuery, Compilable, Kysely } from 'kysely';
import type { EnvironmentId } from '../lib/ids.js';

/** A placeholder stands where any parameter goes, the environment id included (a string either way). */
type Placeholder = EnvironmentId;

/**
 * A hot query compiled once and run many times with new values. Kysely builds and compiles a query
 * on every call; for the per-request reads of access-token verification that costs as much as the
 * query itself. `build` receives placeholder strings and must use each placeholder as a parameter
 * exactly where the real value goes; the compiled SQL is kept per database handle.
 */
export function reusableQuery<DB, Row, P extends string>(
  names: readonly P[],
  build: (db: Kysely<DB>, placeholders: Record<P, Placeholder>) => Compilable<Row>,
) {
  const compiled = new WeakMap<Kysely<DB>, CompiledQuery<Row>>();
  const placeholders = Object.fromEntries(names.map((name) => [name, `\u0000${name}\u0000`])) as Record<P, Placeholder>;
  const byPlaceholder = new Map<string, P>(names.map((name) => [placeholders[name], name]));

  return async (db: Kysely<DB>, values: Record<P, unknown>): Promise<Row[]> => {
    let query = compiled.get(db);
    if (!query) {
      query = build(db, placeholders).compile();
      compiled.set(db, query);
    }
    const parameters = query.parameters.map((p) => {
      const name = typeof p === 'string' ? byPlaceholder.get(p) : undefined;
      return name === undefined ? p : values[name];
    });
    const result = await db.executeQuery<Row>({ ...query, parameters });
    return result.rows;
  };
}
