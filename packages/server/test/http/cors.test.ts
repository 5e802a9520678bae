import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';

describe('CORS on the browser surfaces', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  const preflight = (url: string, origin: string) =>
    t.call({
      method: 'OPTIONS',
      url,
      headers: { origin, 'access-control-request-method': 'GET', 'access-control-request-headers': 'authorization' },
    });

  it('answers a preflight for /v1/environment and /v1/auth/* by echoing the origin, without credentials', async () => {
    for (const url of ['/v1/environment', '/v1/auth/signin', '/v1/me']) {
      const res = await preflight(url, 'https://app.example.test');
      expect(res.statusCode, url).toBe(204);
      expect(res.headers['access-control-allow-origin']).toBe('https://app.example.test');
      expect(res.headers['access-control-allow-headers']).toContain('Authorization');
      expect(res.headers['access-control-allow-credentials']).toBeUndefined();
      expect(res.headers.vary).toContain('Origin');
    }
  });

  it('is not the security boundary: the origin lock still refuses the real request', async () => {
    expect((await preflight('/v1/environment', 'https://evil.test')).statusCode).toBe(204);
    const res = await t.call({
      method: 'GET',
      url: '/v1/environment',
      credential: t.project.production.publishableKey,
      headers: { origin: 'https://evil.test' },
    });
    expect(res.statusCode).toBe(403);
    expect(res.json().error.code).toBe('origin_not_allowed');
  });

  it('lets an allowed page read the answer', async () => {
    const res = await t.call({
      method: 'GET',
      url: '/v1/environment',
      credential: t.project.production.publishableKey,
      headers: { origin: 'https://app.example.test' },
    });
    expect(res.statusCode).toBe(200);
    expect(res.headers['access-control-allow-origin']).toBe('https://app.example.test');
  });

  it('lets a page PUT to a signed upload URL and read public assets', async () => {
    const url = `/v1/assets/${t.project.development.id}/${'a'.repeat(64)}`;
    const res = await t.call({
      method: 'OPTIONS',
      url: `${url}?sig=x`,
      headers: {
        origin: 'http://localhost:3000',
        'access-control-request-method': 'PUT',
        'access-control-request-headers': 'content-type',
      },
    });
    expect(res.statusCode).toBe(204);
    expect(res.headers['access-control-allow-methods']).toContain('PUT');
    expect(res.headers['access-control-allow-headers']).toContain('Content-Type');
    expect(res.headers['access-control-allow-credentials']).toBeUndefined();
  });

  it('exposes the rate-limit headers and Retry-After to pages', async () => {
    const res = await t.call({
      method: 'GET',
      url: '/v1/environment',
      credential: t.project.development.publishableKey,
      headers: { origin: 'http://localhost:3000' },
    });
    expect(res.headers['access-control-expose-headers']).toContain('X-RateLimit-Remaining');
    expect(res.headers['access-control-expose-headers']).toContain('Retry-After');
    expect(res.headers['x-ratelimit-remaining']).toBeDefined();
  });

  it('offers no CORS on server-only surfaces', async () => {
    const res = await preflight('/v1/platform/projects', 'https://app.example.test');
    expect(res.headers['access-control-allow-origin']).toBeUndefined();
    expect(res.statusCode).toBe(404);
  });
});
