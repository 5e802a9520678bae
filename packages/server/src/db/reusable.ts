import type { CompiledQuery, Compilable, Kysely } from 'kysely';
import type { EnvironmentId } from '../lib/ids.js';

/** A placeholder stands where any parameter goes, the environment id included (a string either way). */
type Placeholder = EnvironmentId;

/**
 * A hot statement compiled once and run many times with new values. Kysely builds and compiles a
 * query on every call; for the per-request reads of access-token verification that costs as much as
 * the query itself. `build` receives placeholder strings and must use each placeholder as a parameter
 * exactly where the real value goes (other values, constants, stay as they were compiled); the
 * compiled SQL is kept per database handle. Answers the statement with the real values in place.
 */
export function reusableStatement<DB, Row, P extends string>(
  names: readonly P[],
  build: (db: Kysely<DB>, placeholders: Record<P, Placeholder>) => Compilable<Row>,
) {
  const compiled = new WeakMap<Kysely<DB>, CompiledQuery<Row>>();
  const placeholders = Object.fromEntries(names.map((name) => [name, `\u0000${name}\u0000`])) as Record<P, Placeholder>;
  const byPlaceholder = new Map<string, P>(names.map((name) => [placeholders[name], name]));

  return (db: Kysely<DB>, values: Record<P, unknown>): CompiledQuery<Row> => {
    let query = compiled.get(db);
    if (!query) {
      query = build(db, placeholders).compile();
      const unused = names.filter((name) => !query!.parameters.includes(placeholders[name]));
      if (unused.length > 0) throw new Error(`reusableStatement: placeholders never bound: ${unused.join(', ')}`);
      compiled.set(db, query);
    }
    const parameters = query.parameters.map((p) => {
      const name = typeof p === 'string' ? byPlaceholder.get(p) : undefined;
      return name === undefined ? p : values[name];
    });
    return { ...query, parameters };
  };
}

/** `reusableStatement`, run: its rows. */
export function reusableQuery<DB, Row, P extends string>(
  names: readonly P[],
  build: (db: Kysely<DB>, placeholders: Record<P, Placeholder>) => Compilable<Row>,
) {
  const statement = reusableStatement(names, build);
  return async (db: Kysely<DB>, values: Record<P, unknown>): Promise<Row[]> => (await db.executeQuery(statement(db, values))).rows;
}
