import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';

interface Schema {
  title?: string;
  properties?: Record<string, unknown>;
  required?: string[];
  anyOf?: Schema[];
}
interface Operation {
  parameters?: Array<{ in: string; name: string }>;
  requestBody?: { content?: Record<string, { schema: Schema }> };
  responses?: Record<string, { content?: Record<string, { schema: Schema }> }>;
}

/** One route of the contract's tables (packages/contract/src/routes.ts), read by the TypeScript checker. */
interface TableRoute {
  key: string;
  /** The body's fields, `?` after the optional ones; null without a body; 'bytes' for a Blob. */
  body: string[] | 'bytes' | null;
  query: string[];
  /** The answer's shapes as written (`User`, `SignedIn | SignUpPending`, `void`). */
  response: string[];
}

/** The contract's route tables as its TypeScript says them: every key of `Routes`, with its body, query and answer. */
function tableRoutes(): TableRoute[] {
  const file = fileURLToPath(new URL('../../../contract/src/routes.ts', import.meta.url));
  const options = { strict: true, noEmit: true, module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext };
  const program = ts.createProgram([file], options);
  const checker = program.getTypeChecker();
  const routes = checker.getExportsOfModule(checker.getSymbolAtLocation(program.getSourceFile(file)!)!).find((s) => s.name === 'Routes')!;
  /** A type's fields, `?` after the optional ones; of a union, a field is required when every member requires it. */
  const fields = (type: ts.Type): string[] => {
    const members = type.isUnion() ? type.types : [type];
    const required = (name: string) =>
      members.every((member) => {
        const property = member.getProperty(name);
        return property !== undefined && !(property.flags & ts.SymbolFlags.Optional);
      });
    const names = new Set(members.flatMap((member) => checker.getPropertiesOfType(member).map((p) => p.name)));
    return [...names].map((name) => (required(name) ? name : `${name}?`)).sort();
  };
  return checker.getPropertiesOfType(checker.getDeclaredTypeOfSymbol(routes)).map((route) => {
    const shape = checker.getTypeOfSymbol(route);
    const part = (name: string) => shape.getProperty(name);
    const body = part('body');
    const bodyType = body && checker.getNonNullableType(checker.getTypeOfSymbol(body));
    const query = part('query');
    const response = (part('response')!.declarations![0] as ts.PropertySignature).type!;
    return {
      key: route.name,
      body: !bodyType ? null : bodyType.getSymbol()?.name === 'Blob' ? 'bytes' : fields(bodyType),
      query: query ? fields(checker.getTypeOfSymbol(query)).map((name) => name.replace(/\?$/, '')) : [],
      response: response
        .getText()
        .split('|')
        .map((name) => name.trim()),
    };
  });
}

/**
 * Whether a client's body (`fields`, `?` after the optional ones) is one the route takes: each field is
 * one of the schema's, and each field the schema requires the client requires too. A client may send
 * less than the route takes (the console's SSO form sends the fields of the kinds it offers).
 */
function mismatches(fields: string[], schema: Schema): string[] {
  const named = new Set(fields.map((field) => field.replace(/\?$/, '')));
  const unknown = [...named].filter((name) => !(name in (schema.properties ?? {}))).map((name) => `${name}: not a field of the route`);
  const loose = (schema.required ?? []).filter((name) => !fields.includes(name)).map((name) => `${name}: required by the route`);
  return [...unknown, ...loose];
}

describe("the contract's route tables", () => {
  let t: TestApp;
  let paths: Record<string, Record<string, Operation>>;
  const table = tableRoutes();
  beforeAll(async () => {
    t = await startTestApp();
    paths = (await t.call({ method: 'GET', url: '/v1/openapi.json' })).json().paths;
  });
  afterAll(() => t.close());

  it('holds the routes the clients call, each once', () => {
    expect(table.length).toBeGreaterThan(120);
    expect(new Set(table.map((r) => r.key)).size).toBe(table.length);
  });

  it.each(table.map((route) => [route.key, route] as const))(
    '%s is a route of the server, with its body, query and answer',
    (key, route) => {
      const [method, path] = key.split(' ') as [string, string];
      const operation = paths[path]?.[method.toLowerCase()];
      expect(operation, `${key} is not in the OpenAPI document`).toBeDefined();
      const body = operation!.requestBody?.content?.['application/json']?.schema;
      if (route.body === 'bytes' || route.body === null) expect(body, `${key} takes a JSON body`).toBeUndefined();
      else {
        expect(body, `${key} takes no JSON body`).toBeDefined();
        expect(mismatches(route.body, body!), `${key}: the body's fields`).toEqual([]);
      }
      const query = (operation!.parameters ?? []).filter((p) => p.in === 'query').map((p) => p.name);
      expect(route.query.sort(), `${key}: the query's names`).toEqual(query.sort());
      const successes = Object.entries(operation!.responses ?? {}).filter(([status]) => status.startsWith('2'));
      const titles = [...new Set(successes.map(([, r]) => r.content?.['application/json']?.schema.title ?? 'void'))].sort();
      expect(route.response.sort(), `${key}: the answer's shapes`).toEqual(titles);
    },
  );
});
