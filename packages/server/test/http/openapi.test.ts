import { contractShapes } from '@gatehouse/contract';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ERROR_STATUS } from '../../src/lib/errors.js';
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
    // Routes that answer bytes, not JSON: their success has no schema. So do the SSO endpoints a
    // browser visits: SP metadata is XML, the callback and the ACS answer a 303 to redirectUrl.
    const bytes = new Set([
      'get /v1/assets/{namespace}/{sha256}',
      'get /v1/sso/saml/{connectionId}/metadata',
      'get /v1/sso/oidc/{connectionId}/callback',
      'post /v1/sso/oidc/{connectionId}/callback',
      'post /v1/sso/saml/{connectionId}/acs',
      'get /hosted/assets/hosted.js',
      'get /hosted/{environmentId}/{page}',
      'get /console',
      'get /console/setup',
      'get /console/assets/{file}',
    ]);
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

describe('error answers in the OpenAPI document', () => {
  type Operation = { responses: Record<string, { $ref?: string; description?: string }> };
  type Document = {
    paths: Record<string, Record<string, Operation>>;
    components: { responses: Record<string, { headers?: Record<string, unknown>; content: Record<string, { schema: any }> }> };
  };
  let t: TestApp;
  let doc: Document;
  beforeAll(async () => {
    t = await startTestApp();
    doc = (await t.call({ method: 'GET', url: '/v1/openapi.json' })).json();
  });
  afterAll(() => t.close());

  const operation = (method: string, path: string) => doc.paths[path]![method]!;
  const statuses = (method: string, path: string) => Object.keys(operation(method, path).responses);

  it('defines one response per error status, whose body names exactly the catalogue codes of that status', () => {
    const byStatus = new Map<number, string[]>();
    for (const [code, status] of Object.entries(ERROR_STATUS)) byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
    for (const [status, codes] of byStatus) {
      const response = doc.components.responses[`Error${status}`];
      expect(response, `no shared response for ${status}`).toBeDefined();
      const schema = response!.content['application/json']!.schema;
      expect(schema.required).toEqual(['error']);
      expect(schema.properties.error.required).toEqual(['code', 'message']);
      expect([...schema.properties.error.properties.code.enum].sort()).toEqual(codes.sort());
    }
    expect(doc.components.responses.Error429!.headers).toHaveProperty('Retry-After');
  });

  it('lists 400 and 500 on every route, and every reference resolves', () => {
    for (const [path, methods] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(methods)) {
        expect(Object.keys(op.responses), `${method} ${path}`).toEqual(expect.arrayContaining(['400', '500', '503']));
        for (const response of Object.values(op.responses)) {
          if (response.$ref) expect(doc.components.responses[response.$ref.replace('#/components/responses/', '')], response.$ref).toBeDefined();
        }
      }
    }
  });

  it('lists the credential refusals (401, 403) exactly on routes that take a credential', () => {
    for (const route of t.app.registeredRoutes.filter((r) => r.url !== '/v1/openapi.json')) {
      const listed = statuses(route.method.toLowerCase(), route.url.replace(/:(\w+)/g, '{$1}'));
      const expected = route.credentials.length > 0;
      expect(listed.includes('401'), `${route.method} ${route.url}`).toBe(expected);
      expect(listed.includes('403'), `${route.method} ${route.url}`).toBe(expected);
    }
  });

  it('lists 429 where the rate limit counts the request, and not on public, platform or JWKS routes', () => {
    expect(statuses('post', '/v1/auth/signin')).toContain('429');
    expect(statuses('get', '/v1/me')).toContain('429');
    expect(statuses('get', '/v1/users')).toContain('429');
    expect(statuses('get', '/v1/jwks')).not.toContain('429');
    expect(statuses('get', '/v1/platform/projects')).not.toContain('429');
    expect(statuses('get', '/v1/health')).not.toContain('429');
  });

  it('lists route-specific answers: 404 and 414 on paths with ids, 413 and 415 on bodies', () => {
    expect(statuses('get', '/v1/users/{userId}')).toEqual(expect.arrayContaining(['404', '414']));
    expect(statuses('get', '/v1/users')).not.toContain('404');
    expect(statuses('post', '/v1/auth/signin')).toEqual(expect.arrayContaining(['413', '415']));
    expect(statuses('get', '/v1/me')).not.toContain('415');
  });

  it("keeps a route's own documented answer for a status (health's 503 body)", () => {
    const health = operation('get', '/v1/health').responses['503']!;
    expect(health.$ref).toBeUndefined();
    expect(JSON.stringify(health)).toContain('database');
  });
});
