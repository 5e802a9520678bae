import { generateKeyPairSync, verify } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { profileFromClaims } from '../../src/sso/oidc/client.js';
import { OIDC_PRESETS, PRESET_ISSUERS, presetScopes } from '../../src/sso/oidc/presets.js';
import { AppleKeyError, appleClientSecret, appleKey, appleUserName } from '../../src/sso/social/apple.js';
import { vouchesForEmail } from '../../src/sso/social/trust.js';
import type { Connection } from '../../src/sso/connections.js';
import { DISCORD, discordEndpoints, isDotPath, profileFromUserinfo, valueAt } from '../../src/sso/social/oauth2.js';

/**
 * Each preset's specifics against answers recorded in the shape its provider documents (the values
 * are made up; the field names, types and nesting are the provider's).
 */
describe('social presets: endpoints, claims and profiles', () => {
  it('knows each preset, its issuer or endpoints and its default scopes', () => {
    expect(OIDC_PRESETS).toEqual(['google', 'github', 'microsoft', 'apple', 'gitlab', 'discord', 'linkedin']);
    expect(PRESET_ISSUERS).toMatchObject({ apple: 'https://appleid.apple.com', gitlab: 'https://gitlab.com', linkedin: 'https://www.linkedin.com/oauth' });
    expect(discordEndpoints()).toMatchObject({
      authorizationUrl: 'https://discord.com/oauth2/authorize',
      tokenUrl: 'https://discord.com/api/oauth2/token',
      userinfoUrl: 'https://discord.com/api/users/@me',
    });
    expect(discordEndpoints('http://127.0.0.1:9')).toMatchObject({ tokenUrl: 'http://127.0.0.1:9/api/oauth2/token', userinfoUrl: 'http://127.0.0.1:9/api/users/@me' });
    expect(presetScopes('apple')).toEqual(['openid', 'email', 'name']);
    expect(presetScopes('discord')).toEqual(['identify', 'email']);
    expect(presetScopes('gitlab')).toEqual(['openid', 'email', 'profile']);
    expect(presetScopes('linkedin')).toEqual(['openid', 'email', 'profile']);
  });

  it('gitlab: the ID token of docs.gitlab.com ("OpenID Connect provider")', () => {
    const claims = {
      iss: 'https://gitlab.com',
      sub: '1',
      aud: 'client',
      exp: 1700000000,
      iat: 1699999000,
      auth_time: 1699998000,
      sub_legacy: '2bd6b8a1c9e6f4b2a5e0d3c7f1b4a9e8d2c6f0b3a7e1d5c9f3b6a0e4d8c2f7b1',
      name: 'Administrator',
      nickname: 'root',
      preferred_username: 'root',
      email: 'admin@example.com',
      email_verified: true,
      website: '',
      profile: 'https://gitlab.com/root',
      picture: 'https://www.gravatar.com/avatar/x',
      groups_direct: ['gitlab-org'],
    };
    expect(profileFromClaims(claims, 'gitlab')).toEqual({ subject: '1', email: 'admin@example.com', emailVerified: true, firstName: null, lastName: null });
  });

  it('linkedin: the ID token of "Sign In with LinkedIn using OpenID Connect"', () => {
    const claims = {
      iss: 'https://www.linkedin.com/oauth',
      aud: '86i3vs2ba6bubs',
      iat: 1699999000,
      exp: 1700002600,
      sub: '782bbtaQ',
      name: 'John Doe',
      given_name: 'John',
      family_name: 'Doe',
      picture: 'https://media.licdn-ei.com/dms/image/C5F03AQHqK8v7tB1HCQ/profile-displayphoto-shrink_100_100/0/',
      email: 'doe@email.com',
      email_verified: true,
      locale: 'en-US',
    };
    expect(profileFromClaims(claims, 'linkedin')).toEqual({ subject: '782bbtaQ', email: 'doe@email.com', emailVerified: true, firstName: 'John', lastName: 'Doe' });
  });

  it('apple: the ID token of "Authenticating users with Sign in with Apple" (string booleans, relay address)', () => {
    const claims = {
      iss: 'https://appleid.apple.com',
      aud: 'com.example.web',
      exp: 1700000000,
      iat: 1699913600,
      sub: '001234.5c2d3e4f5a6b7c8d9e0f1a2b3c4d5e6f.1234',
      c_hash: 'x9Z1Rk4Vb7zLwY2nH0oP3q',
      email: 'dv8w6qz5m4@privaterelay.appleid.com',
      email_verified: 'true',
      is_private_email: 'true',
      auth_time: 1699913590,
      nonce_supported: true,
    };
    expect(profileFromClaims(claims, 'apple')).toMatchObject({ subject: claims.sub, email: claims.email, emailVerified: true });
    expect(profileFromClaims({ ...claims, email_verified: 'false' }, 'apple').emailVerified).toBe(false);
    // Only Apple's strings are read as booleans: a generic IdP's "true" string proves nothing.
    expect(profileFromClaims({ ...claims, email_verified: 'true' }, null).emailVerified).toBe(false);
    // The `user` form field of the first authorization; its email is never taken (it is not signed).
    expect(appleUserName('{"name":{"firstName":"Tim","lastName":"Apple"},"email":"dv8w6qz5m4@privaterelay.appleid.com"}')).toEqual({ firstName: 'Tim', lastName: 'Apple' });
    expect(appleUserName('not json')).toEqual({ firstName: null, lastName: null });
    expect(appleUserName('{"name":{"firstName":42}}')).toEqual({ firstName: null, lastName: null });
  });

  it('apple: the client secret is an ES256 JWT (kid; iss team, sub services id, aud appleid.apple.com; short-lived) that the key verifies', () => {
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
    const pem = privateKey.export({ format: 'pem', type: 'pkcs8' }).toString();
    const now = Date.UTC(2026, 0, 1);
    const jwt = appleClientSecret({ teamId: 'A1B2C3D4E5', keyId: 'KEY1234567', clientId: 'com.example.web', privateKey: pem, now });
    const [h, p, s] = jwt.split('.') as [string, string, string];
    expect(JSON.parse(Buffer.from(h, 'base64url').toString())).toEqual({ alg: 'ES256', kid: 'KEY1234567' });
    const payload = JSON.parse(Buffer.from(p, 'base64url').toString());
    expect(payload).toEqual({ iss: 'A1B2C3D4E5', sub: 'com.example.web', aud: 'https://appleid.apple.com', iat: now / 1000, exp: now / 1000 + 300 });
    expect(verify('sha256', Buffer.from(`${h}.${p}`), { key: publicKey, dsaEncoding: 'ieee-p1363' }, Buffer.from(s, 'base64url'))).toBe(true);
    const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ format: 'pem', type: 'pkcs8' }).toString();
    expect(() => appleKey(rsa)).toThrow(AppleKeyError);
    expect(() => appleKey('-----BEGIN PRIVATE KEY-----\nnope\n-----END PRIVATE KEY-----')).toThrow(AppleKeyError);
  });

  it('discord: GET /users/@me of discord.com/developers ("User Object"): id as a string, verified, global_name', () => {
    const me = {
      id: '80351110224678912',
      username: 'nelly',
      discriminator: '0',
      global_name: 'Nelly',
      avatar: '8342729096ea3675442027381ff50dfe',
      verified: true,
      email: 'nelly@discord.com',
      flags: 64,
      banner: '06c16474723fe537c283b8efa61a30c8',
      accent_color: 16711680,
      premium_type: 1,
      public_flags: 64,
      avatar_decoration_data: null,
    };
    expect(profileFromUserinfo(me, DISCORD.fields)).toEqual({ subject: '80351110224678912', email: 'nelly@discord.com', emailVerified: true, firstName: 'Nelly', lastName: null });
    expect(profileFromUserinfo({ ...me, verified: false }, DISCORD.fields).emailVerified).toBe(false);
    // Without the email scope Discord leaves email out.
    expect(profileFromUserinfo({ id: '1', username: 'x' }, DISCORD.fields)).toMatchObject({ email: null, emailVerified: false });
  });

  it('generic userinfo: dot paths, array indexes, numeric ids; own properties only', () => {
    const answer = { data: { user: { id: 42, emails: [{ address: 'a@example.test', verified: 'true' }] } } };
    expect(profileFromUserinfo(answer, { id: 'data.user.id', email: 'data.user.emails.0.address', emailVerified: 'data.user.emails.0.verified' })).toMatchObject({
      subject: '42',
      email: 'a@example.test',
      emailVerified: true,
    });
    expect(valueAt({ a: 1 }, 'constructor')).toBeUndefined();
    expect(valueAt({ a: 1 }, '__proto__')).toBeUndefined();
    expect(valueAt({ a: [1, 2] }, 'a.length')).toBeUndefined();
    expect(() => profileFromUserinfo({ id: { nested: true } }, { id: 'id', email: 'email' })).toThrow(/no usable id/);
    expect(() => profileFromUserinfo({ id: 2 ** 60 }, { id: 'id', email: 'email' })).toThrow(/no usable id/);
    expect(isDotPath('data.user.id')).toBe(true);
    expect(isDotPath('a..b')).toBe(false);
    expect(isDotPath('')).toBe(false);
    expect(isDotPath('a b')).toBe(false);
  });

  it('self-managed GitLab link by email: its emails are vouched for only with trustEmailVerified, gitlab.com always', () => {
    const gitlab = (config: Record<string, unknown>) => ({ type: 'oidc', domains: [], config: { preset: 'gitlab', ...config } }) as unknown as Connection;
    expect(vouchesForEmail(gitlab({ issuer: 'https://gitlab.com' }))).toBe(true);
    expect(vouchesForEmail(gitlab({ issuer: 'https://gitlab.example.com', trustEmailVerified: false }))).toBe(false);
    expect(vouchesForEmail(gitlab({ issuer: 'https://gitlab.example.com', trustEmailVerified: true }))).toBe(true);
  });
});
