import { describe, expect, it } from 'vitest';
import { parseEmail } from '../../src/identity/email.js';
import { assertAcceptablePassword, commonPasswords } from '../../src/identity/password-policy.js';
import { RefreshTokens } from '../../src/sessions/refresh-token.js';

describe('email normalization', () => {
  it.each([
    ['  Ada.Lovelace@Example.COM ', 'Ada.Lovelace@example.com'],
    ['a+tag@sub.example.org', 'a+tag@sub.example.org'],
    ["o'brien@example.ie", "o'brien@example.ie"],
    ['jose@xn--bcher-kva.example', 'jose@xn--bcher-kva.example'],
  ])('accepts %j as %j', (raw, normalized) => {
    expect(parseEmail(raw)).toEqual({ email: normalized });
  });

  it.each([
    'Ada <ada@example.com>',
    'ada@example.com, bob@example.com',
    'ada@example.com;bob@example.com',
    '"ada"@example.com',
    'ada(comment)@example.com',
    'ada @example.com',
    'ada\t@example.com',
    'ada\u200b@example.com',
    'ada..l@example.com',
    'ada.@example.com',
    'ada@example',
    'ada@-example.com',
    'ada@example.123',
    'ada@[127.0.0.1]',
    `${'a'.repeat(65)}@example.com`,
    '@example.com',
  ])('refuses %j', (raw) => {
    expect(parseEmail(raw)).toHaveProperty('problem');
  });
});

describe('password policy', () => {
  it('ships 10,000 common passwords', () => {
    expect(commonPasswords().size).toBe(10_000);
    expect(commonPasswords().has('password')).toBe(true);
  });

  it('refuses short, common (any case) and over-long passwords; accepts long ones', () => {
    expect(() => assertAcceptablePassword('1234567')).toThrow(/at least 8/);
    expect(() => assertAcceptablePassword('SunShine')).toThrow(/most common/);
    expect(() => assertAcceptablePassword('x'.repeat(1025))).toThrow(/longer than 1024/);
    expect(() => assertAcceptablePassword('ünïcødé!')).not.toThrow();
    expect(() => assertAcceptablePassword('x'.repeat(1024))).not.toThrow();
  });
});

describe('refresh tokens', () => {
  const tokens = new RefreshTokens('s'.repeat(48));
  const sessionId = 'sess_0123456789abcdefghjkmnpqrs';

  it('derives the same successor from the same token, and a different one from another', () => {
    const first = tokens.first('env_a', sessionId);
    const parsed = tokens.parse('env_a', first)!;
    expect(parsed).toEqual({ sessionId, generation: 0 });
    const next = tokens.successor('env_a', first, parsed);
    expect(tokens.successor('env_a', first, parsed)).toBe(next);
    expect(tokens.parse('env_a', next)).toEqual({ sessionId, generation: 1 });
    expect(tokens.successor('env_a', tokens.first('env_a', sessionId), parsed)).not.toBe(next);
  });

  it('refuses a token of another environment, another instance, or with an altered part', () => {
    const token = tokens.first('env_a', sessionId);
    expect(tokens.parse('env_b', token)).toBeNull();
    expect(new RefreshTokens('t'.repeat(48)).parse('env_a', token)).toBeNull();
    const [head, generation, secret, mac] = token.split('.') as [string, string, string, string];
    expect(tokens.parse('env_a', [head, '5', secret, mac].join('.'))).toBeNull();
    expect(tokens.parse('env_a', [head, generation, secret.replace(/^./, (c) => (c === 'A' ? 'B' : 'A')), mac].join('.'))).toBeNull();
    expect(tokens.parse('env_a', `${token}x`)).toBeNull();
  });
});
