import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { replacePasswordHash } from '../../src/identity/queries.js';
import type { EnvironmentId } from '../../src/lib/ids.js';
import { GOOD_PASSWORD, json, signIn, signUp, uniqueEmail } from '../helpers/identity.js';

describe('importing users: attacks', { timeout: 30_000 }, () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  const importInto = (secretKey: string, users: unknown[]) =>
    t.call({ method: 'POST', url: '/v1/users/import', credential: secretKey, payload: { users } });

  it('cross-tenant idempotency: an externalId of another environment never answers that environment’s user', async () => {
    const externalId = `shared_${Date.now()}`;
    const inDev = json(await importInto(t.project.development.secretKey, [{ email: uniqueEmail('dev'), externalId }])).data[0];
    expect(inDev.created).toBe(true);
    const inProd = json(await importInto(t.project.production.secretKey, [{ email: uniqueEmail('prod'), externalId }])).data[0];
    expect(inProd.created).toBe(true);
    expect(inProd.user.id).not.toBe(inDev.user.id);
    // Replayed in production: production's own user, never development's.
    const replay = json(await importInto(t.project.production.secretKey, [{ email: uniqueEmail('other'), externalId }])).data[0];
    expect(replay).toMatchObject({ created: false, user: { id: inProd.user.id } });
  });

  it('cost exhaustion: digests with costs that would stall every sign-in are refused at import', async () => {
    const heavy = [
      { passwordHasher: 'bcrypt', passwordDigest: `$2b$31$${'a'.repeat(53)}` },
      // Just past the bounds: bcrypt 13 (0.4 s of a pool thread per try), argon2 65 MiB or 11 passes, Firebase 11 rounds or mem cost 16.
      { passwordHasher: 'bcrypt', passwordDigest: `$2b$13$${'a'.repeat(53)}` },
      { passwordHasher: 'argon2id', passwordDigest: '$argon2id$v=19$m=66560,t=1,p=1$c29tZXNhbHQ$nf65EOgLrQMR/uIPnA4rEsF5h7TKyQwu9U1bMCHGi/4' },
      { passwordHasher: 'argon2id', passwordDigest: '$argon2id$v=19$m=19456,t=11,p=1$c29tZXNhbHQ$nf65EOgLrQMR/uIPnA4rEsF5h7TKyQwu9U1bMCHGi/4' },
      { passwordHasher: 'scrypt_firebase', passwordDigest: 'aGFzaA==$c2FsdA==$a2V5$Bw==$11$14' },
      { passwordHasher: 'scrypt_firebase', passwordDigest: 'aGFzaA==$c2FsdA==$a2V5$Bw==$8$16' },
      {
        passwordHasher: 'argon2id',
        passwordDigest: '$argon2id$v=19$m=4194304,t=1,p=1$c29tZXNhbHQ$nf65EOgLrQMR/uIPnA4rEsF5h7TKyQwu9U1bMCHGi/4',
      },
      {
        passwordHasher: 'argon2i',
        passwordDigest: '$argon2i$v=19$m=65536,t=999,p=1$c29tZXNhbHQ$iekCn0Y3spW+sCcFanM2xBT63UP2sghkUoHLIUpWRS8',
      },
      { passwordHasher: 'scrypt_firebase', passwordDigest: 'aGFzaA==$c2FsdA==$a2V5$Bw==$8$40' },
      { passwordHasher: 'pbkdf2_sha256', passwordDigest: 'pbkdf2_sha256$99999999$salt$CWWFdHOWwPnki7HvkcqN9iA2T3KLW1cf2uZ5kvArtVY=' },
    ];
    const rows = heavy.map((digest) => ({ email: uniqueEmail('heavy'), ...digest }));
    const results = json(await importInto(t.project.development.secretKey, rows)).data;
    for (const result of results)
      expect(result.error, JSON.stringify(result)).toMatchObject({ code: 'invalid_request', details: { fields: ['passwordDigest'] } });
    // At the bounds, accepted.
    const edge = [
      { passwordHasher: 'bcrypt', passwordDigest: `$2b$12$${'a'.repeat(53)}` },
      { passwordHasher: 'argon2id', passwordDigest: '$argon2id$v=19$m=65536,t=10,p=1$c29tZXNhbHQ$nf65EOgLrQMR/uIPnA4rEsF5h7TKyQwu9U1bMCHGi/4' },
      { passwordHasher: 'scrypt_firebase', passwordDigest: 'aGFzaA==$c2FsdA==$a2V5$Bw==$10$15' },
    ].map((digest) => ({ email: uniqueEmail('edge'), ...digest }));
    for (const result of json(await importInto(t.project.development.secretKey, edge)).data) expect(result, JSON.stringify(result)).toMatchObject({ created: true });
  });

  it('credential confusion: the import takes a secret key only, never a publishable key or a session', async () => {
    const user = await signUp(t);
    for (const credential of [t.project.development.publishableKey, user.accessToken]) {
      const refused = await importInto(credential, [{ email: uniqueEmail('sneak') }]);
      expect(refused.statusCode).toBe(403);
      expect(json(refused).error.code).toBe('credential_not_accepted');
    }
  });

  it('a user cannot give themselves an externalId (it is not a profile field)', async () => {
    const user = await signUp(t);
    const patched = await t.call({ method: 'PATCH', url: '/v1/me', credential: user.accessToken, payload: { externalId: 'user_admin' } });
    expect(patched.statusCode).toBe(400);
  });

  it('a late rehash never overwrites a password changed meanwhile (compare-and-set on the old digest)', async () => {
    const environmentId = t.project.development.id as EnvironmentId;
    const email = uniqueEmail('cas');
    const digest = '$2y$10$.vGA1O9wmRjrwAVXD98HNOgsNpDczlqm3Jq7KnEd1rVAGv3Fykk1a';
    const created = json(
      await t.call({
        method: 'POST',
        url: '/v1/users',
        credential: t.project.development.secretKey,
        payload: { email, passwordDigest: digest, passwordHasher: 'bcrypt' },
      }),
    );
    // The operator changes the password while a sign-in with the old one is still rehashing.
    const changed = await t.call({
      method: 'PATCH',
      url: `/v1/users/${created.id}`,
      credential: t.project.development.secretKey,
      payload: { password: GOOD_PASSWORD },
    });
    expect(changed.statusCode).toBe(200);
    await replacePasswordHash(t.store.db, environmentId, created.id, digest, '$argon2id$v=19$m=19456,t=2,p=1$c29tZXNhbHQ$bGF0ZQ');
    expect((await signIn(t, email, GOOD_PASSWORD)).statusCode).toBe(200);
    expect((await signIn(t, email, 'rasmuslerdorf')).statusCode).toBe(401);
  });
});
