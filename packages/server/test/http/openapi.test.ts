import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';

describe('GET /v1/openapi.json', () => {
  let t: TestApp;
  let doc: { openapi: string; paths: Record<string, Record<string, { security?: unknown[] }>> };
  beforeAll(async () => {
    t = await startTestApp();
    doc = (await t.call({ method: 'GET', url: '/v1/openapi.json' })).json();
  });
  afterAll(() => t.close());

  it('is an OpenAPI 3.1 document with the four security schemes', () => {
    expect(doc.openapi).toBe('3.1.0');
    expect(Object.keys((doc as unknown as { components: { securitySchemes: object } }).components.securitySchemes).sort()).toEqual([
      'accessToken',
      'platformKey',
      'publishableKey',
      'secretKey',
    ]);
  });

  it('documents every route, each with its security scheme', () => {
    const routes = t.app.registeredRoutes.filter((r) => r.url !== '/v1/openapi.json');
    expect(routes.length).toBeGreaterThan(5);
    for (const route of routes) {
      const openapiPath = route.url.replace(/:(\w+)/g, '{$1}');
      const operation = doc.paths[openapiPath]?.[route.method.toLowerCase()];
      expect(operation, `${route.method} ${route.url} is missing from the OpenAPI document`).toBeDefined();
      expect(operation!.security, `${route.method} ${route.url} names no security requirement`).toHaveLength(route.credentials.length);
    }
  });
});
