import bcrypt from 'bcryptjs';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { IdentityService } from '../../src/identity/service.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { json, signIn, uniqueEmail } from '../helpers/identity.js';

/**
 * Digests made by each hasher's reference implementation, with the password that made them:
 * bcrypt from PHP's password_hash (the manual's example) and OpenBSD's test vectors; argon2 from the
 * PHC reference implementation's tests (phc-winner-argon2 src/test.c); Firebase's scrypt from the
 * sample in firebase/scrypt's README (its documented parameters); pbkdf2_sha256 from Django's
 * make_password (its test suite's vector).
 */
const REFERENCE: { hasher: string; digest: string; password: string }[] = [
  { hasher: 'bcrypt', digest: '$2y$10$.vGA1O9wmRjrwAVXD98HNOgsNpDczlqm3Jq7KnEd1rVAGv3Fykk1a', password: 'rasmuslerdorf' },
  { hasher: 'bcrypt', digest: '$2a$06$If6bvum7DFjUnE9p2uDeDu0YHzrHM6tf.iqN8.yx.jNN1ILEf7h0i', password: 'abc' },
  {
    hasher: 'argon2id',
    digest: '$argon2id$v=19$m=256,t=2,p=1$c29tZXNhbHQ$nf65EOgLrQMR/uIPnA4rEsF5h7TKyQwu9U1bMCHGi/4',
    password: 'password',
  },
  {
    hasher: 'argon2i',
    digest: '$argon2i$v=19$m=256,t=2,p=1$c29tZXNhbHQ$iekCn0Y3spW+sCcFanM2xBT63UP2sghkUoHLIUpWRS8',
    password: 'password',
  },
  {
    hasher: 'scrypt_firebase',
    digest: [
      'lSrfV15cpx95/sZS2W9c9Kp6i/LVgQNDNC/qzrCnh1SAyZvqmZqAjTdn3aoItz+VHjoZilo78198JAdRuid5lQ==',
      '42xEC+ixf3L2lw==',
      'jxspr8Ki0RYycVU8zykbdLGjFQ3McFUH0uiiTvC8pVMXAn210wjLNmdZJzxUECKbm0QsEmYUSDzZvpjeJ9WmXA==',
      'Bw==',
      '8',
      '14',
    ].join('$'),
    password: 'user1password',
  },
  { hasher: 'pbkdf2_sha256', digest: 'pbkdf2_sha256$10000$seasalt$CWWFdHOWwPnki7HvkcqN9iA2T3KLW1cf2uZ5kvArtVY=', password: 'lètmein' },
];

const OUR_ARGON2 = '$argon2id$v=19$m=19456,t=2,p=1$';

describe('importing users with their password digests', { timeout: 60_000 }, () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  const env = () => t.project.development;
  const sk = (method: 'GET' | 'POST', url: string, payload?: object) =>
    t.call({ method, url, credential: env().secretKey, ...(payload ? { payload } : {}) });
  const storedHash = async (userId: string) =>
    (
      await t.store.db
        .selectFrom('users')
        .select('password_hash')
        .where('environment_id', '=', env().id as never)
        .where('id', '=', userId)
        .executeTakeFirstOrThrow()
    ).password_hash;

  it('verifies each hasher against its reference digests, then rehashes to argon2id at the first sign-in', async () => {
    const digests = [...REFERENCE, { hasher: 'bcrypt', digest: bcrypt.hashSync('made by bcryptjs', 4), password: 'made by bcryptjs' }];
    for (const { hasher, digest, password } of digests) {
      const email = uniqueEmail(hasher);
      const created = await sk('POST', '/v1/users', { email, passwordDigest: digest, passwordHasher: hasher });
      expect(created.statusCode, `${hasher}: ${created.body}`).toBe(201);
      expect(json(created).passwordEnabled).toBe(true);
      const id = json(created).id as string;

      const wrong = await signIn(t, email, `${password}x`);
      expect(wrong.statusCode, hasher).toBe(401);
      expect(json(wrong).error.code).toBe('invalid_credentials');
      expect(await storedHash(id)).not.toMatch(/^\$argon2id\$v=19\$m=19456/); // a wrong password changes nothing

      const right = await signIn(t, email, password);
      expect(right.statusCode, `${hasher}: ${right.body}`).toBe(200);
      expect((await storedHash(id))!.startsWith(OUR_ARGON2), hasher).toBe(true);
      const again = await signIn(t, email, password);
      expect(again.statusCode, hasher).toBe(200);
      expect((await signIn(t, email, `${password}x`)).statusCode).toBe(401);
    }
  });

  it('signs in with a bcrypt digest of a password over 72 bytes (bcrypt reads the first 72, everywhere)', async () => {
    const password = `${'é'.repeat(40)}-and-then-some`; // 94 bytes of UTF-8
    const email = uniqueEmail('long');
    const created = await sk('POST', '/v1/users', { email, passwordDigest: bcrypt.hashSync(password, 4), passwordHasher: 'bcrypt' });
    expect(created.statusCode, created.body).toBe(201);
    expect((await signIn(t, email, `${'é'.repeat(35)}x`)).statusCode).toBe(401);
    expect((await signIn(t, email, password)).statusCode).toBe(200);
    expect((await storedHash(json(created).id))!.startsWith(OUR_ARGON2)).toBe(true);
    expect((await signIn(t, email, password)).statusCode).toBe(200);
  });

  it('refuses malformed digests and digests whose costs are out of bounds, naming passwordDigest', async () => {
    const bad: [string, string, RegExp][] = [
      ['bcrypt', '$2a$10$tooshort', /bcrypt digest/],
      ['bcrypt', `$2a$31$${'a'.repeat(53)}`, /cost 31/],
      ['bcrypt', REFERENCE[2]!.digest, /bcrypt digest/],
      ['argon2id', REFERENCE[3]!.digest, /argon2id/],
      ['argon2id', '$argon2id$v=19$m=4194304,t=2,p=1$c29tZXNhbHQ$nf65EOgLrQMR/uIPnA4rEsF5h7TKyQwu9U1bMCHGi/4', /m=4194304/],
      ['scrypt_firebase', 'abc$def', /salt separator/],
      ['scrypt_firebase', REFERENCE[4]!.digest.replace(/\$14$/, '$40'), /mem cost/],
      ['pbkdf2_sha256', 'pbkdf2_sha256$99999999$salt$CWWFdHOWwPnki7HvkcqN9iA2T3KLW1cf2uZ5kvArtVY=', /iterations/],
      ['pbkdf2_sha256', 'md5$salt$abc', /Django/],
    ];
    for (const [passwordHasher, passwordDigest, message] of bad) {
      const refused = await sk('POST', '/v1/users', { email: uniqueEmail('bad'), passwordDigest, passwordHasher });
      expect(refused.statusCode, passwordDigest).toBe(400);
      expect(json(refused).error.message).toMatch(message);
      expect(json(refused).error.details.fields).toEqual(['passwordDigest']);
    }
    const unknown = await sk('POST', '/v1/users', { email: uniqueEmail('bad'), passwordDigest: 'x', passwordHasher: 'md5' });
    expect(unknown.statusCode).toBe(400);
    const alone = await sk('POST', '/v1/users', { email: uniqueEmail('bad'), passwordDigest: REFERENCE[0]!.digest });
    expect(json(alone).error.details.fields).toEqual(['passwordDigest', 'passwordHasher']);
    const both = await sk('POST', '/v1/users', {
      email: uniqueEmail('bad'),
      password: 'a perfectly fine password',
      passwordDigest: REFERENCE[0]!.digest,
      passwordHasher: 'bcrypt',
    });
    expect(both.statusCode).toBe(400);
  });

  it('keeps externalId (unique per environment) and the original createdAt', async () => {
    const externalId = `ext_${Date.now()}`;
    const created = await sk('POST', '/v1/users', {
      email: uniqueEmail('ext'),
      externalId,
      createdAt: 1_500_000_000_000,
      emailVerified: true,
    });
    expect(created.statusCode, created.body).toBe(201);
    expect(json(created)).toMatchObject({ externalId, createdAt: 1_500_000_000_000, emailVerified: true });
    const found = await sk('GET', `/v1/users?externalId=${externalId}`);
    expect(json(found).data.map((u: { id: string }) => u.id)).toEqual([json(created).id]);
    const taken = await sk('POST', '/v1/users', { email: uniqueEmail('ext'), externalId });
    expect(taken.statusCode).toBe(409);
    expect(json(taken).error.details.fields).toEqual(['externalId']);
    // Another environment has its own externalIds.
    const other = await t.call({
      method: 'POST',
      url: '/v1/users',
      credential: t.project.production.secretKey,
      payload: { email: uniqueEmail('ext'), externalId },
    });
    expect(other.statusCode, other.body).toBe(201);
  });

  it('POST /v1/users/import: per-row results, a bad row blocks nobody, a repeated externalId answers the same user', async () => {
    const tag = `imp${Date.now()}`;
    const taken = uniqueEmail(tag);
    expect((await sk('POST', '/v1/users', { email: taken })).statusCode).toBe(201);
    const rows = [
      { email: uniqueEmail(tag), externalId: `${tag}_1`, passwordDigest: REFERENCE[0]!.digest, passwordHasher: 'bcrypt', firstName: 'One' },
      { email: 'not an address', externalId: `${tag}_2` },
      { email: taken, externalId: `${tag}_3` },
      'not an object',
      { email: uniqueEmail(tag), externalId: `${tag}_5`, passwordDigest: '$2a$10$broken', passwordHasher: 'bcrypt' },
      { email: uniqueEmail(tag), externalId: `${tag}_6`, publicMetadata: { plan: 'pro' }, unknownField: 1 },
      { email: uniqueEmail(tag), externalId: `${tag}_7`, publicMetadata: { plan: 'pro' }, emailVerified: true },
      { email: uniqueEmail(tag) },
    ];
    const first = await sk('POST', '/v1/users/import', { users: rows });
    expect(first.statusCode, first.body).toBe(200);
    const data = json(first).data as any[];
    expect(data.map((r) => r.index)).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    expect(data[0]).toMatchObject({ created: true, user: { externalId: `${tag}_1`, firstName: 'One', passwordEnabled: true } });
    expect(data[1].error).toMatchObject({ code: 'invalid_request', details: { fields: ['email'] } });
    expect(data[2].error).toMatchObject({ code: 'conflict' });
    expect(data[3].error).toMatchObject({ code: 'invalid_request' });
    expect(data[4].error).toMatchObject({ code: 'invalid_request', details: { fields: ['passwordDigest'] } });
    expect(data[5].error).toMatchObject({ code: 'invalid_request', details: { fields: ['unknownField'] } });
    expect(data[6]).toMatchObject({ created: true, user: { emailVerified: true, publicMetadata: { plan: 'pro' } } });
    expect(data[7].created).toBe(true);

    // Sent again (an interrupted import resumed): rows with an externalId answer the same users.
    const second = json(await sk('POST', '/v1/users/import', { users: rows })).data as any[];
    expect(second[0]).toMatchObject({ created: false, user: { id: data[0].user.id } });
    expect(second[6]).toMatchObject({ created: false, user: { id: data[6].user.id } });
    expect(second[7].error).toMatchObject({ code: 'conflict' }); // no externalId: its email is taken now
    const listed = json(await sk('GET', `/v1/users?query=${tag}&limit=100`)).data;
    expect(listed).toHaveLength(4); // the taken address, rows 0, 6 and 7
    // The imported bcrypt digest signs in.
    expect((await signIn(t, (rows[0] as { email: string }).email, REFERENCE[0]!.password)).statusCode).toBe(200);
  });

  it('racing imports of the same externalIds create each user once', async () => {
    const tag = `race${Date.now()}`;
    const rows = Array.from({ length: 20 }, (_, i) => ({ email: uniqueEmail(`${tag}n${i}`), externalId: `${tag}_${i}` }));
    const [a, b] = await Promise.all([sk('POST', '/v1/users/import', { users: rows }), sk('POST', '/v1/users/import', { users: rows })]);
    const left = json(a).data as any[];
    const right = json(b).data as any[];
    for (let i = 0; i < rows.length; i++) {
      expect(left[i].user?.id, JSON.stringify(left[i])).toBeDefined();
      expect(right[i].user?.id).toBe(left[i].user.id);
      expect([left[i].created, right[i].created].filter(Boolean)).toHaveLength(1);
    }
  });

  it("an import whose two look-ups straddle a racing import's commit answers that import's users", async () => {
    // Replays the interleaving on the real service: the externalIds are looked up before the other
    // import commits and the addresses after, so its rows look as if strangers held their addresses.
    const tag = `straddle${Date.now()}`;
    const rows = [0, 1].map((i) => ({ email: uniqueEmail(`${tag}n${i}`), externalId: `${tag}_${i}` }));
    const winner = json(await sk('POST', '/v1/users/import', { users: rows })).data as any[];
    expect(winner.map((r) => r.created)).toEqual([true, true]);
    const lookUp = IdentityService.prototype.importLookups;
    const lookups = vi
      .spyOn(IdentityService.prototype, 'importLookups')
      .mockImplementationOnce(async function (this: IdentityService, ...args: Parameters<typeof lookUp>) {
        return { ...(await lookUp.apply(this, args)), byExternalId: new Map() };
      });
    try {
      const stranger = { email: rows[0]!.email }; // no externalId: a taken address is its answer
      const loser = json(await sk('POST', '/v1/users/import', { users: [...rows, stranger] })).data as any[];
      expect(lookups).toHaveBeenCalledTimes(2); // the stale one, then the externalIds again
      expect(loser[0]).toMatchObject({ created: false, user: { id: winner[0].user.id } });
      expect(loser[1]).toMatchObject({ created: false, user: { id: winner[1].user.id } });
      expect(loser[2].error).toMatchObject({ code: 'conflict' });
    } finally {
      lookups.mockRestore();
    }
  });

  it('more than 1,000 rows are refused whole, nobody created', async () => {
    const tag = `many${Date.now()}`;
    const rows = Array.from({ length: 1001 }, (_, i) => ({ email: `${tag}.${i}@example.test` }));
    const refused = await sk('POST', '/v1/users/import', { users: rows });
    expect(refused.statusCode).toBe(400);
    expect(json(refused).error.message).toMatch(/At most 1000 users per call/);
    expect(json(await sk('GET', `/v1/users?query=${tag}`)).data).toHaveLength(0);
  });

  it('a body over the import\'s 16 MiB is a 413 that names that limit', async () => {
    const huge = await t.call({
      method: 'POST',
      url: '/v1/users/import',
      credential: t.project.development.secretKey,
      headers: { 'content-type': 'application/json' },
      payload: JSON.stringify({ users: [{ email: 'x@example.test', firstName: 'x'.repeat(17 * 1024 * 1024) }] }),
    });
    expect(huge.statusCode).toBe(413);
    expect(json(huge).error).toMatchObject({ code: 'payload_too_large', message: expect.stringContaining('16 MiB') });
  });
});
