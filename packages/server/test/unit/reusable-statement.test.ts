import SQLite from 'better-sqlite3';
import { Kysely, SqliteDialect } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { reusableQuery, reusableStatement } from '../../src/db/reusable.js';

/** reusableStatement: a hot statement compiled once, its placeholders replaced by each call's values. */
interface Db {
  notes: { environment_id: string; id: string; body: string | null; pinned: number };
}

const opened: SQLite.Database[] = [];
afterEach(() => {
  for (const database of opened.splice(0)) database.close();
});

function database(): Kysely<Db> {
  const sqlite = new SQLite(':memory:');
  opened.push(sqlite);
  sqlite.exec('create table notes (environment_id text not null, id text not null, body text, pinned integer not null)');
  return new Kysely<Db>({ dialect: new SqliteDialect({ database: sqlite }) });
}

describe('reusableStatement', () => {
  it('puts each value where its placeholder was, a placeholder used twice included, and keeps constants as compiled', () => {
    const statement = reusableStatement(
      ['environmentId', 'id'] as const,
      (db: Kysely<Db>, p: { environmentId: string; id: string | null }) =>
        db.insertInto('notes').values({ environment_id: p.environmentId, id: p.id!, body: p.id, pinned: 1 }),
    );
    const db = database();
    const compiled = statement(db, { environmentId: 'env_a', id: 'note_1' });
    expect(compiled.parameters).toEqual(['env_a', 'note_1', 'note_1', 1]);
    expect(statement(db, { environmentId: 'env_b', id: null }).parameters).toEqual(['env_b', null, null, 1]);
  });

  it('compiles once per database handle (building twice then, to check the placeholders)', () => {
    let builds = 0;
    const statement = reusableStatement(['id'] as const, (db: Kysely<Db>, p: { id: string }) => {
      builds++;
      return db.selectFrom('notes').selectAll().where('id', '=', p.id);
    });
    const first = database();
    const second = database();
    statement(first, { id: 'a' });
    statement(first, { id: 'b' });
    expect(builds).toBe(2);
    statement(second, { id: 'c' });
    expect(builds).toBe(4);
  });

  it('refuses a placeholder the statement never binds, whose value would silently be dropped', () => {
    const statement = reusableStatement(['environmentId', 'id'] as const, (db: Kysely<Db>, p: { environmentId: string; id: string }) =>
      db.selectFrom('notes').selectAll().where('environment_id', '=', p.environmentId),
    );
    expect(() => statement(database(), { environmentId: 'env_a', id: 'note_1' })).toThrow(/never bound: id/);
  });

  it('refuses a build that reads a value it was not given a placeholder for (it would be the constant undefined)', () => {
    const statement = reusableStatement(['id'] as const, (db: Kysely<Db>, p: { id: string; body: string }) =>
      db.updateTable('notes').set({ body: p.body }).where('id', '=', p.id),
    );
    expect(() => statement(database(), { id: 'note_1', body: 'text' })).toThrow(/body is read but not named/);
  });

  it('refuses a value computed from a placeholder, which would be compiled as a constant', () => {
    const statement = reusableStatement(['id', 'pinned'] as const, (db: Kysely<Db>, p: { id: string; pinned: number }) =>
      db
        .updateTable('notes')
        .set({ pinned: p.pinned, body: `${p.id}!` })
        .where('id', '=', p.id),
    );
    expect(() => statement(database(), { id: 'note_1', pinned: 1 })).toThrow(/computed from a placeholder/);
  });

  it('refuses a statement whose SQL depends on a placeholder', () => {
    const statement = reusableStatement(['id'] as const, (db: Kysely<Db>, p: { id: string }) =>
      db.selectFrom('notes').select(p.id.includes('a') ? 'body' : 'pinned'),
    );
    expect(() => statement(database(), { id: 'note_1' })).toThrow(/SQL depends on a placeholder/);
  });

  it('runs, through reusableQuery, with the values of each call', async () => {
    const db = database();
    await db
      .insertInto('notes')
      .values([
        { environment_id: 'env_a', id: 'note_1', body: 'first', pinned: 0 },
        { environment_id: 'env_b', id: 'note_1', body: 'other environment', pinned: 0 },
      ])
      .execute();
    const note = reusableQuery(['environmentId', 'id'] as const, (db: Kysely<Db>, p) =>
      db.selectFrom('notes').select('body').where('environment_id', '=', p.environmentId).where('id', '=', p.id),
    );
    expect(await note(db, { environmentId: 'env_a', id: 'note_1' })).toEqual([{ body: 'first' }]);
    expect(await note(db, { environmentId: 'env_b', id: 'note_1' })).toEqual([{ body: 'other environment' }]);
    await db.destroy();
  });
});
