import { describe, expect, it } from 'vitest';
import { openStore } from '../../src/db/index.js';

describe('SQLite limits', () => {
  const store = openStore({ sqliteFile: ':memory:' });

  it('are written into the SQL as literals, so statements are not re-planned on every run', () => {
    const compiled = store.db.selectFrom('users').selectAll().where('id', '=', 'x').limit(25).compile();
    expect(compiled.sql).toMatch(/limit 25$/);
    expect(compiled.parameters).toEqual(['x']);
  });

  it('stay parameters when they are not plain non-negative integers', () => {
    for (const limit of [2.5, -1]) {
      const compiled = store.db.selectFrom('users').selectAll().limit(limit).compile();
      expect(compiled.sql).toMatch(/limit \?$/);
      expect(compiled.parameters).toEqual([limit]);
    }
  });
});
