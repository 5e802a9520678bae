import { testEnvironmentId } from '../helpers/ids.js';
import { describe, expect, it } from 'vitest';
import { isOriginAllowed, normalizeDomain, normalizeOrigin } from '../../src/tenancy/origin.js';
import { defaultSettings, type Environment, type EnvironmentType } from '../../src/tenancy/settings.js';

function environment(type: EnvironmentType, callbackOrigins: string[] = []): Environment {
  return {
    id: testEnvironmentId('env_x'),
    projectId: 'proj_x',
    type,
    publishableKey: 'pk_x',
    settings: { ...defaultSettings(), domain: 'example.test', callbackOrigins },
  };
}

describe('origin lock', () => {
  const production = environment('production', ['https://partner.other.test', 'http://app.internal.test:8080']);
  const development = environment('development');

  it.each([
    'https://example.test',
    'https://app.example.test',
    'https://a.b.example.test',
    'https://APP.Example.TEST',
    'https://app.example.test:443',
    'https://partner.other.test',
    'http://app.internal.test:8080',
  ])('accepts %s', (origin) => {
    expect(isOriginAllowed(production, origin)).toBe(true);
  });

  it.each([
    ['a look-alike suffix', 'https://example.test.evil.test'],
    ['a look-alike prefix', 'https://evilexample.test'],
    ['the literal null origin', 'null'],
    ['http on an https domain', 'http://example.test'],
    ['a host with a trailing dot', 'https://example.test.'],
    ['userinfo', 'https://user@example.test'],
    ['userinfo hiding another host', 'https://example.test@evil.test'],
    ['a path', 'https://example.test/'],
    ['a non-default port on the domain', 'https://example.test:8443'],
    ['a backslash', 'https://evil.test\\example.test'],
    ['percent-encoding', 'https://example%2etest'],
    ['a callback origin with another port', 'http://app.internal.test:8081'],
    ['a callback origin over https instead of http', 'https://app.internal.test:8080'],
    ['an empty string', ''],
    ['a scheme-relative origin', '//example.test'],
    ['another scheme', 'ftp://example.test'],
    ['a unicode look-alike', 'https://exаmple.test'],
    ['localhost in production', 'http://localhost:3000'],
  ])('refuses %s', (_why, origin) => {
    expect(isOriginAllowed(production, origin)).toBe(false);
  });

  it('admits http loopback on any port in development only', () => {
    for (const origin of ['http://localhost:3000', 'http://127.0.0.1:5173', 'http://localhost']) {
      expect(isOriginAllowed(development, origin)).toBe(true);
      expect(isOriginAllowed(production, origin)).toBe(false);
    }
    expect(isOriginAllowed(development, 'http://localhost.evil.test:3000')).toBe(false);
  });

  it('normalizes origins and domains', () => {
    expect(normalizeOrigin('HTTPS://App.Example.test:443')).toBe('https://app.example.test');
    expect(normalizeOrigin('http://x.test:80')).toBe('http://x.test');
    expect(normalizeOrigin('http://x.test:8080')).toBe('http://x.test:8080');
    expect(normalizeOrigin('https://x.test/path')).toBeNull();
    expect(normalizeDomain('Example.COM')).toBe('example.com');
    expect(normalizeDomain('https://example.com')).toBeNull();
    expect(normalizeDomain('localhost')).toBeNull();
  });
});
