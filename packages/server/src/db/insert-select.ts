import { sql, type AliasedRawBuilder } from 'kysely';

/**
 * A row's values as a select list (`$1 as "id", …`), so that `INSERT … SELECT … FROM cte` writes the
 * row only if the CTE gave one: a conditional write in one statement, where `INSERT … VALUES` takes
 * no condition. PostgreSQL types each parameter from the column it is inserted into.
 */
export function selectionOf<Row extends Record<string, unknown>>(row: Row): AliasedRawBuilder<unknown, string & keyof Row>[] {
  return Object.entries(row).map(([column, value]) => sql`${value}`.as(column)) as AliasedRawBuilder<unknown, string & keyof Row>[];
}

/** The columns of `selectionOf(row)`, in its order. */
export function columnsOf<Row extends Record<string, unknown>>(row: Row): (string & keyof Row)[] {
  return Object.keys(row) as (string & keyof Row)[];
}
