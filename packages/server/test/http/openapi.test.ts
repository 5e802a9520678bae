import { contractShapes } from '@gatehouse/contract';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';

describe('GET /v1/openapi.json', () => {
  let t: TestApp;
  let doc: {
    openapi: string;
    paths: Record<
      string,
      Record<string, { security?: unknown[]; responses?: Record<string, { content?: Record<string, { schema: unknown }> }> }>
    >;
  };
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

  it('answers every success with a shape of @gatehouse/contract, unchanged', () => {
    // Routes that answer bytes, not JSON: their success has no schema.
    const bytes = new Set(['get /v1/assets/{namespace}/{sha256}']);
    const shapes = contractShapes();
    let checked = 0;
    for (const [path, operations] of Object.entries(doc.paths)) {
      for (const [method, operation] of Object.entries(operations)) {
        const route = `${method} ${path}`;
        const successes = Object.entries(operation.responses ?? {}).filter(([status]) => status.startsWith('2'));
        expect(successes.length, `${route} documents no success response`).toBeGreaterThan(0);
        for (const [status, response] of successes) {
          const schema = response.content?.['application/json']?.schema as { title?: string } | undefined;
          if (schema === undefined) {
            // Only an empty answer (204) or bytes may go without a schema.
            expect(status === '204' || bytes.has(route), `${route} ${status} documents no schema`).toBe(true);
            continue;
          }
          const title = schema.title;
          expect(title !== undefined && shapes.has(title), `${route} ${status} answers a shape of its own, not one of the contract`).toBe(
            true,
          );
          expect(schema, `${route} ${status} changes the contract's ${title}`).toEqual(asDocumented(shapes.get(title!)));
          checked++;
        }
      }
    }
    expect(checked).toBeGreaterThan(50);
  });
});

/**
 * The contract schema as the OpenAPI generator writes it: plain JSON, `const` as a one-value
 * `enum`, and a record's catch-all pattern as `additionalProperties`.
 */
function asDocumented(schema: unknown): unknown {
  return JSON.parse(JSON.stringify(schema), (_key, value: unknown) => {
    if (value === null || typeof value !== 'object' || Array.isArray(value)) return value;
    let result = value as Record<string, unknown>;
    if ('const' in result) {
      const { const: only, ...rest } = result;
      result = { ...rest, enum: [only] };
    }
    const patterns = result.patternProperties as Record<string, unknown> | undefined;
    if (patterns && Object.keys(patterns).length === 1 && '^.*$' in patterns) {
      const { patternProperties: _, ...rest } = result;
      result = { ...rest, additionalProperties: patterns['^.*$'] };
    }
    return result;
  });
}
