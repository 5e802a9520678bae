import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { json } from '../helpers/identity.js';
import { testDb } from '../helpers/store.js';

/**
 * `GET /v1/users?query=`: a substring of the folded email, first name, last name or username, with
 * the same answers on SQLite (FTS5 trigram) and PostgreSQL (pg_trgm), whatever the needle's length.
 */
describe(`user search (${testDb()})`, () => {
  let t: TestApp;
  let key: string;
  const create = (payload: Record<string, unknown>, credential = key) => t.call({ method: 'POST', url: '/v1/users', credential, payload });
  const search = async (query: string, credential = key, extra = '') =>
    json(await t.call({ method: 'GET', url: `/v1/users?query=${encodeURIComponent(query)}${extra}`, credential }));
  const emails = async (query: string) => (await search(query)).data.map((u: { email: string }) => u.email).sort();

  beforeAll(async () => {
    t = await startTestApp();
    key = (await t.createProject('Search')).development.secretKey;
    await create({ email: 'ada.lovelace@engines.test', firstName: 'Ada', lastName: 'Lovelace', username: 'countess' });
    await create({ email: 'emile.zola@paris.test', firstName: 'Émile', lastName: 'Zola' });
    await create({ email: 'grace@navy.test', firstName: 'Grace', lastName: 'Hopper', username: 'amazing_grace' });
    await create({ email: 'ALAN@Bletchley.test', firstName: 'Alan', lastName: 'Turing' });
    await create({ email: 'quoted@odd.test', firstName: 'Say "Hi"' });
  });
  afterAll(() => t.close());

  it('finds a substring of any of the four fields, whatever the case, letters beyond ASCII included', async () => {
    expect(await emails('lovelace')).toEqual(['ada.lovelace@engines.test']);
    expect(await emails('COUNTESS')).toEqual(['ada.lovelace@engines.test']);
    expect(await emails('émile')).toEqual(['emile.zola@paris.test']);
    expect(await emails('ÉMILE')).toEqual(['emile.zola@paris.test']);
    expect(await emails('bletchley')).toEqual(['ALAN@bletchley.test']);
    expect(await emails('hopp')).toEqual(['grace@navy.test']);
  });

  it('gives the same answers to needles of one, two and three characters (scanned or indexed)', async () => {
    expect(await emails('z')).toEqual(['emile.zola@paris.test', 'grace@navy.test']);
    expect(await emails('zo')).toEqual(['emile.zola@paris.test']);
    expect(await emails('zol')).toEqual(['emile.zola@paris.test']);
    expect(await emails('a')).toHaveLength(5);
    expect(await emails('qq')).toEqual([]);
    expect(await emails('qqq')).toEqual([]);
  });

  it('takes quotes and LIKE wildcards literally', async () => {
    expect(await emails('say "hi')).toEqual(['quoted@odd.test']);
    expect(await emails('"')).toEqual(['quoted@odd.test']);
    expect(await emails('g_grace')).toEqual(['grace@navy.test']);
    expect(await emails('g%grace')).toEqual([]);
    expect(await emails('a_a')).toEqual([]);
    expect(await emails('amazing_')).toEqual(['grace@navy.test']);
    expect(await emails('%')).toEqual([]);
  });

  it('does not match across fields', async () => {
    // The email ends in "test" and the first name is "Ada": no match spans the two.
    expect(await emails('test\nada')).toEqual([]);
    expect(await emails('testada')).toEqual([]);
    expect(await emails('adalove')).toEqual([]);
  });

  it('follows renames and deletions', async () => {
    const user = json(await create({ email: 'rename@search.test', firstName: 'Before' }));
    expect(await emails('before')).toEqual(['rename@search.test']);
    await t.call({
      method: 'PATCH',
      url: `/v1/users/${user.id}`,
      credential: key,
      payload: { firstName: 'After', username: 'renamed_one' },
    });
    expect(await emails('before')).toEqual([]);
    expect(await emails('after')).toEqual(['rename@search.test']);
    expect(await emails('renamed_o')).toEqual(['rename@search.test']);
    await t.call({ method: 'DELETE', url: `/v1/users/${user.id}`, credential: key });
    expect(await emails('after')).toEqual([]);
  });

  it('pages through the matches, newest first', async () => {
    const project = await t.createProject('Search pages');
    const pageKey = project.development.secretKey;
    for (let i = 0; i < 7; i++) await create({ email: `member${i}@pages.test`, firstName: 'Paged' }, pageKey);
    await create({ email: 'other@pages.test', firstName: 'Other' }, pageKey);
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const body = await search('paged', pageKey, `&limit=3${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      seen.push(...body.data.map((u: { email: string }) => u.email));
      cursor = body.nextCursor;
    } while (cursor);
    expect(seen).toEqual(Array.from({ length: 7 }, (_, i) => `member${6 - i}@pages.test`));
  });

  it.skipIf(testDb() !== 'sqlite')('still finds the right users after SQLite renumbers rows (VACUUM, a dump and restore)', async () => {
    const project = await t.createProject('Search vacuum');
    const vacuumKey = project.development.secretKey;
    const ids: string[] = [];
    for (let i = 0; i < 6; i++) ids.push(json(await create({ email: `vac${i}@vacuum.test`, firstName: `Vacuumed${i}` }, vacuumKey)).id);
    // Gaps, so that VACUUM has rows to renumber.
    for (const id of ids.slice(0, 3)) await t.call({ method: 'DELETE', url: `/v1/users/${id}`, credential: vacuumKey });
    await sql`vacuum`.execute(t.store.db);
    // What VACUUM may do to a table without an INTEGER PRIMARY KEY, and a dump and restore does.
    await sql`update users set rowid = rowid + 100000 where environment_id = ${project.development.id}`.execute(t.store.db);
    const found = async (query: string) => (await search(query, vacuumKey)).data.map((u: { email: string }) => u.email).sort();
    expect(await found('vacuumed4')).toEqual(['vac4@vacuum.test']);
    expect(await found('vacuumed')).toEqual(['vac3@vacuum.test', 'vac4@vacuum.test', 'vac5@vacuum.test']);
    // A user added afterwards gets a key of its own and is found too.
    await create({ email: 'after@vacuum.test', firstName: 'Vacuumed9' }, vacuumKey);
    expect(await found('vacuumed9')).toEqual(['after@vacuum.test']);
    expect(await found('vacuumed4')).toEqual(['vac4@vacuum.test']);
  });

  it("never answers with another environment's users", async () => {
    const other = await t.createProject('Search elsewhere');
    await create({ email: 'lovelace.elsewhere@engines.test' }, other.development.secretKey);
    expect(await emails('lovelace')).toEqual(['ada.lovelace@engines.test']);
    expect((await search('lovelace', other.development.secretKey)).data.map((u: { email: string }) => u.email)).toEqual([
      'lovelace.elsewhere@engines.test',
    ]);
  });
});
