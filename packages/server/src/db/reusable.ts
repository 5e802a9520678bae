import type { CompiledQuery, Compilable, Kysely } from 'kysely';
import type { EnvironmentId } from '../lib/ids.js';

/** A placeholder stands where any parameter goes, the environment id included (a string either way). */
type Placeholder = EnvironmentId;

const MARK = '\u0000';

/**
 * A hot statement compiled once and run many times with new values. Kysely builds and compiles a
 * query on every call; for the per-request reads of access-token verification that costs as much as
 * the query itself. `build` receives an object of placeholders shaped like the values (typed as
 * them, though each is a marker string) and must use each one as a parameter exactly where its
 * value goes; other parameters, constants, stay as compiled. The compiled SQL is kept per database
 * handle. Answers the statement with the call's values in place.
 *
 * `build` runs twice at the first compile, with two sets of markers: a statement whose SQL depends
 * on a placeholder, which transforms one (`p.n + 1` would silently become a constant), which reads
 * a value not named, or which leaves one unbound is refused then, with an error, rather than run
 * with a wrong value.
 */
export function reusableStatement<DB, Row, Values extends object>(
  names: readonly (keyof Values & string)[],
  build: (db: Kysely<DB>, placeholders: Values) => Compilable<Row>,
): (db: Kysely<DB>, values: Values) => CompiledQuery<Row> {
  // A value read but not named would be compiled as the constant `undefined`: reading one throws.
  const markersOf = (set: string): Record<string, string> =>
    new Proxy(Object.fromEntries(names.map((name) => [name, `${MARK}${set}${name}${MARK}`])), {
      get(markers, key) {
        if (typeof key === 'string' && !Object.hasOwn(markers, key)) throw new Error(`reusableStatement: ${key} is read but not named`);
        return Reflect.get(markers, key);
      },
    });
  const first = markersOf('a');
  const second = markersOf('b');
  const nameOf = new Map(names.map((name) => [first[name]!, name]));
  const compiled = new WeakMap<Kysely<DB>, CompiledQuery<Row>>();

  const compile = (db: Kysely<DB>): CompiledQuery<Row> => {
    const query = build(db, first as Values).compile();
    const check = build(db, second as Values).compile();
    const refuse = (why: string) => new Error(`reusableStatement: ${why} in ${query.sql}`);
    if (check.sql !== query.sql || check.parameters.length !== query.parameters.length) throw refuse('the SQL depends on a placeholder');
    query.parameters.forEach((parameter, index) => {
      const name = typeof parameter === 'string' ? nameOf.get(parameter) : undefined;
      if (name !== undefined) {
        if (check.parameters[index] !== second[name]) throw refuse(`placeholder ${name} moved between compiles`);
      } else if (typeof parameter === 'string' && parameter.includes(MARK)) {
        throw refuse(`parameter ${index + 1} is computed from a placeholder`);
      } else if (!sameConstant(check.parameters[index], parameter)) {
        throw refuse(`parameter ${index + 1} differs between compiles`);
      }
    });
    const unbound = names.filter((name) => !query.parameters.includes(first[name]));
    if (unbound.length > 0) throw refuse(`placeholders never bound: ${unbound.join(', ')}`);
    return query;
  };

  return (db, values) => {
    let query = compiled.get(db);
    if (!query) {
      query = compile(db);
      compiled.set(db, query);
    }
    const parameters = query.parameters.map((parameter) => {
      const name = typeof parameter === 'string' ? nameOf.get(parameter) : undefined;
      return name === undefined ? parameter : values[name];
    });
    return { ...query, parameters };
  };
}

function sameConstant(a: unknown, b: unknown): boolean {
  return Object.is(a, b) || (typeof a === 'object' && a !== null && JSON.stringify(a) === JSON.stringify(b));
}

/** `reusableStatement` with string placeholders, run: its rows. */
export function reusableQuery<DB, Row, P extends string>(
  names: readonly P[],
  build: (db: Kysely<DB>, placeholders: Record<P, Placeholder>) => Compilable<Row>,
) {
  const statement = reusableStatement<DB, Row, Record<P, Placeholder>>(names, build);
  return async (db: Kysely<DB>, values: Record<P, unknown>): Promise<Row[]> =>
    (await db.executeQuery(statement(db, values as Record<P, Placeholder>))).rows;
}
