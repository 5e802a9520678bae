import { testEnvironmentId } from '../helpers/ids.js';
import { describe, expect, it } from 'vitest';
import { linkWithToken, validateRedirectUrl } from '../../src/tenancy/redirect.js';
import { ApiError } from '../../src/lib/errors.js';
import { defaultSettings, type Environment } from '../../src/tenancy/settings.js';

const production: Environment = {
  id: testEnvironmentId('env_p'),
  projectId: 'proj_p',
  type: 'production',
  publishableKey: 'pk_live_x',
  settings: { ...defaultSettings(), domain: 'example.test', callbackOrigins: ['https://partner.other.test'] },
};
const development: Environment = { ...production, type: 'development' };

const refusedCorpus = [
  '//evil.test',
  'https://example.test@evil.test',
  'https://example.test.evil.test',
  'https:/\\evil.test',
  'javascript:alert(1)',
  'https://evil.test/https://example.test',
  'https:///evil.test',
  'https:evil.test',
  '/relative/path',
  'http://example.test/callback',
  'https://example.test:8443/callback',
  'https://example.test\\@evil.test',
  'https://example.test /x',
  'https://example.test\t.evil.test',
  'data:text/html,<script>alert(1)</script>',
  'https://exаmple.test/',
  'https://user:pass@example.test/',
  'http://localhost:3000/callback',
];

function percentVariants(raw: string): string[] {
  const full = [...raw].map((c) => `%${c.charCodeAt(0).toString(16).padStart(2, '0')}`).join('');
  return [encodeURIComponent(raw), full, raw.replace(/[/.@:\\]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)];
}

describe('redirect URLs', () => {
  it.each(refusedCorpus)('refuses %s', (raw) => {
    expect(() => validateRedirectUrl(production, raw)).toThrow(ApiError);
  });

  it.each(refusedCorpus.flatMap(percentVariants))('refuses the percent-encoded variant %s', (raw) => {
    expect(() => validateRedirectUrl(production, raw)).toThrow(ApiError);
  });

  it.each([
    'https://example.test/auth/callback',
    'https://app.example.test/callback?next=%2Fhome#done',
    'https://APP.example.test:443/x',
    'https://partner.other.test/cb',
  ])('accepts %s', (raw) => {
    expect(validateRedirectUrl(production, raw)).toBeInstanceOf(URL);
  });

  it('accepts localhost only in development', () => {
    expect(validateRedirectUrl(development, 'http://localhost:3000/callback').origin).toBe('http://localhost:3000');
  });

  it('refuses with invalid_request naming the field', () => {
    try {
      validateRedirectUrl(production, '//evil.test');
      expect.unreachable();
    } catch (error) {
      expect((error as ApiError).code).toBe('invalid_request');
      expect((error as ApiError).details).toEqual({ fields: ['redirectUrl'] });
    }
  });

  it('adds the token as a query parameter, keeping the rest', () => {
    const url = validateRedirectUrl(production, 'https://app.example.test/cb?next=%2Fhome#frag');
    const link = new URL(linkWithToken(url, 'tok_123'));
    expect(link.searchParams.get('token')).toBe('tok_123');
    expect(link.searchParams.get('next')).toBe('/home');
    expect(link.hash).toBe('#frag');
    expect(link.origin).toBe('https://app.example.test');
  });
});
