/**
 * The published package: built as `npm install` builds it, installed ALONE into a scratch app
 * (@gatehouse/contract absent), its entry points must typecheck and load. Its declarations carry
 * the contract's types written out in full (dist/contract.d.ts), and those must be the contract's.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import {
  build,
  filesOf,
  runModule,
  sameAsContractSource,
  scratchApp,
  typecheck,
  type Result,
} from '../../contract/scripts/installed-package.js';

const packageDir = fileURLToPath(new URL('..', import.meta.url));
const dist = join(packageDir, 'dist');
const written = join(dist, 'contract.d.ts');
/** An import of the contract (a comment may name it). */
const NAMES_CONTRACT = /(from\s*|import\(\s*)['"]@gatehouse\/contract['"]/;

const consumer = `
import { createGatehouseClient, verifyToken, authenticateRequest, GatehouseApiError, type User, type Member, type Page, type CreateUserParams, type ErrorCode } from '@gatehouse/backend';
import { requireAuth as expressAuth } from '@gatehouse/backend/express';
import { requireAuth as honoAuth } from '@gatehouse/backend/hono';
import { getAuth } from '@gatehouse/backend/fastify';

const client = createGatehouseClient({ secretKey: 'sk_test_x', baseUrl: 'https://auth.example.com' });
const body: CreateUserParams = { email: 'ada@example.com', firstName: null };
export async function admin(): Promise<string[]> {
  const user: User = await client.users.create(body);
  const firstName: string | null = user.firstName;
  const page: Page<Member> = await client.members.list('org_1');
  const next: string | null = page.nextCursor;
  for await (const member of client.members.list('org_1')) member.role satisfies string;
  try {
    await client.users.get('user_1');
  } catch (error) {
    if (error instanceof GatehouseApiError) error.code satisfies ErrorCode;
  }
  // @ts-expect-error: passwordEnabled is a boolean
  user.passwordEnabled satisfies string;
  return [user.email, String(firstName), String(next)];
}
export async function verify(token: string) {
  const claims = await verifyToken(token, { issuer: 'https://auth.example.com/v1/environments/env_1' });
  const auth = await authenticateRequest(new Request('https://app.example.com'), { issuer: 'x' });
  return [claims.sub, auth.isSignedIn, expressAuth, honoAuth, getAuth] as const;
}
`;

let app: ReturnType<typeof scratchApp>;
let checked: Result;
beforeAll(() => {
  build(packageDir);
  app = scratchApp(packageDir);
  // One tsc run (they are slow) over the consumer and the proof that the written-out types are the contract's.
  checked = typecheck(
    app.dir,
    { 'consumer.ts': consumer, 'same.ts': existsSync(written) ? sameAsContractSource(written) : 'export {};' },
    { lib: ['ES2022', 'DOM'], types: ['node'] },
  );
}, 180_000);
afterAll(() => app?.remove());

describe('the built @gatehouse/backend', () => {
  test('neither its JavaScript nor its declarations name @gatehouse/contract', () => {
    const naming = filesOf(dist).filter((file) => /\.(js|d\.ts)$/.test(file) && NAMES_CONTRACT.test(readFileSync(file, 'utf8')));
    expect(naming).toEqual([]);
    expect(JSON.parse(readFileSync(join(packageDir, 'package.json'), 'utf8')).dependencies ?? {}).toEqual({});
  });

  test('each adapter declares its framework as an optional peer dependency, and nothing else does', () => {
    const manifest = JSON.parse(readFileSync(join(packageDir, 'package.json'), 'utf8')) as {
      peerDependencies?: Record<string, string>;
      peerDependenciesMeta?: Record<string, { optional?: boolean }>;
    };
    // The frameworks the built adapters name (type imports included): express's adapter names none.
    const named = new Set<string>();
    for (const file of filesOf(dist).filter((f) => /\.(js|d\.ts)$/.test(f))) {
      for (const m of readFileSync(file, 'utf8').matchAll(/from\s*['"](express|fastify|hono)['"]/g)) named.add(m[1]!);
    }
    expect([...named].sort()).toEqual(['fastify', 'hono']);
    const peers = Object.keys(manifest.peerDependencies ?? {}).sort();
    expect(peers).toEqual(['express', 'fastify', 'hono']);
    for (const peer of peers) expect(manifest.peerDependenciesMeta?.[peer]?.optional, peer).toBe(true);
  });

  test('an application that installs only @gatehouse/backend typechecks against every entry point', () => {
    expect(checked.output).toBe('');
    expect(checked.status).toBe(0);
  });

  test('a type error in that application is still reported (the check is live)', () => {
    const broken = `import type { User } from '@gatehouse/backend';\nexport const name: number = ({} as User).email;\n`;
    const result = typecheck(app.dir, { 'broken.ts': broken }, { lib: ['ES2022'], types: ['node'] });
    expect(result.output).toContain("Type 'string' is not assignable to type 'number'");
  }, 60_000);

  test('it loads in that application without the contract installed', () => {
    const result = runModule(
      app.dir,
      "const sdk = await import('@gatehouse/backend'); await import('@gatehouse/backend/express'); console.log(typeof sdk.verifyToken);",
    );
    expect(result.output.trim()).toBe('function');
  });

  test('the types written into dist/contract.d.ts are the contract types', () => {
    expect(readFileSync(join(app.dir, 'same.ts'), 'utf8')).toContain('export const sameUser: Equal<Written.User, Contract.User> = true;');
    expect(checked.output).toBe('');
  });
});
