import { CompiledQuery, sql } from 'kysely';
import { listUsers } from '../../src/identity/queries.js';
import type { EnvironmentId } from '../../src/lib/ids.js';
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

  // SQLite chooses between the newest users, the index and a scan by cost (identity/queries.ts);
  // each choice must give the same answers, page after page, on both databases.
  const importUsers = async (credential: string, users: Record<string, unknown>[]) => {
    for (let i = 0; i < users.length; i += 1000) {
      const answer = await t.call({ method: 'POST', url: '/v1/users/import', credential, payload: { users: users.slice(i, i + 1000) } });
      expect(answer.statusCode, answer.body).toBe(200);
    }
  };
  const pages = async (query: string, credential: string, limit: number) => {
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const body = await search(query, credential, `&limit=${limit}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      seen.push(...body.data.map((u: { email: string }) => u.email));
      cursor = body.nextCursor;
    } while (cursor);
    return seen;
  };

  it('pages through a common needle, a rare one and one found only among older users alike', async () => {
    const project = await t.createProject('Search choices');
    const choicesKey = project.development.secretKey;
    // Oldest first: 120 users where every 40th is "Sparse", then 200 where every fourth is "Common".
    const users = [
      ...Array.from({ length: 120 }, (_, i) => ({ email: `old${i}@choices.test`, firstName: i % 40 === 0 ? 'Sparse' : 'Filler' })),
      ...Array.from({ length: 200 }, (_, i) => ({ email: `new${i}@choices.test`, firstName: i % 4 === 0 ? 'Common' : 'Plain' })),
    ];
    for (const user of users) expect((await create(user, choicesKey)).statusCode).toBe(201);
    const newestFirst = (predicate: (email: string, name: string) => boolean) =>
      users.filter((u) => predicate(u.email, u.firstName)).map((u) => u.email).reverse();
    // At 1 a page, "common" has more candidates than the 32 newest users, which hold a page of it
    // (SQLite reads no index for it, until the pages reach the oldest "common" users).
    expect(await pages('common', choicesKey, 1)).toEqual(newestFirst((_, name) => name === 'Common'));
    expect(await pages('common', choicesKey, 3)).toEqual(newestFirst((_, name) => name === 'Common'));
    // One a page: the newest 32 users below each cursor never hold two, so SQLite asks the index.
    expect(await pages('sparse', choicesKey, 1)).toEqual(['old80@choices.test', 'old40@choices.test', 'old0@choices.test']);
    expect(await pages('new17@', choicesKey, 3)).toEqual(['new17@choices.test']);
    expect(await pages('new1', choicesKey, 7)).toEqual(newestFirst((email) => email.startsWith('new1')));
    expect(await pages('nowhere', choicesKey, 3)).toEqual([]);
  });

  it('finds the few matches of an environment when another has thousands (the index is shared)', async () => {
    const crowded = await t.createProject('Search crowded');
    await importUsers(
      crowded.development.secretKey,
      Array.from({ length: 2100 }, (_, i) => ({ email: `crowd${i}@crowded.test`, lastName: 'Multitude' })),
    );
    const quiet = await t.createProject('Search quiet');
    const quietKey = quiet.development.secretKey;
    for (let i = 0; i < 70; i++) {
      const name = i === 3 || i === 41 ? 'Multitude' : 'Solitude';
      expect((await create({ email: `q${i}@quiet.test`, lastName: name }, quietKey)).statusCode).toBe(201);
    }
    expect(await pages('multitude', quietKey, 1)).toEqual(['q41@quiet.test', 'q3@quiet.test']);
    expect(new Set(await pages('multitude', crowded.development.secretKey, 100)).size).toBe(2100);
  });

  it('an exact email filter with a query answers that user only when the query matches too', async () => {
    const found = await search('lovelace', key, `&email=${encodeURIComponent('ADA.lovelace@engines.test')}`);
    expect(found.data.map((u: { email: string }) => u.email)).toEqual(['ada.lovelace@engines.test']);
    expect((await search('hopper', key, `&email=${encodeURIComponent('ada.lovelace@engines.test')}`)).data).toEqual([]);
  });

  it.skipIf(testDb() !== 'sqlite')(
    'an email filter reads that address from its index, not every user (SQLite keeps no statistics to choose by)',
    async () => {
      // The statement listUsers really sends, captured on its way to the database.
      const sent: CompiledQuery[] = [];
      const db = t.store.db.withPlugin({
        transformQuery: (args) => (sent.push(t.store.db.getExecutor().compileQuery(args.node, args.queryId)), args.node),
        transformResult: async (args) => args.result,
      });
      await listUsers(db, 'env_x' as EnvironmentId, { limit: 21, emailKey: 'a@b.test' });
      const plan = await t.store.db.executeQuery<{ detail: string }>(CompiledQuery.raw(`explain query plan ${sent[0]!.sql}`, [...sent[0]!.parameters]));
      expect(plan.rows.map((r) => r.detail).join('\n')).toMatch(/USING (COVERING )?INDEX users_email_key_order \(environment_id=\? AND email_key=\?\)/);
    },
  );

  it("never answers with another environment's users", async () => {
    const other = await t.createProject('Search elsewhere');
    await create({ email: 'lovelace.elsewhere@engines.test' }, other.development.secretKey);
    expect(await emails('lovelace')).toEqual(['ada.lovelace@engines.test']);
    expect((await search('lovelace', other.development.secretKey)).data.map((u: { email: string }) => u.email)).toEqual([
      'lovelace.elsewhere@engines.test',
    ]);
  });
});
