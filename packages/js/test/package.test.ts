/**
 * The published package: built as `npm install` builds it, installed ALONE into a scratch app
 * (@gatehouse/contract absent), its entry point must typecheck and load. Its declarations carry
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

// A browser app: DOM only, no Node types.
const consumer = `
import { createGatehouse, GatehouseError, type GatehouseState, type User, type Member, type Page, type SignUpParams, type ErrorCode } from '@gatehouse/js';

const gatehouse = createGatehouse({ publishableKey: 'pk_test_x', baseUrl: 'https://auth.example.com' });
const params: SignUpParams = { email: 'ada@example.com', password: 'a long passphrase', firstName: 'Ada' };
export async function flows(): Promise<string[]> {
  const state: GatehouseState = await gatehouse.signUp(params);
  const user: User | null = state.user;
  const page: Page<Member> = await gatehouse.organization.members.list({ limit: 10 });
  const updated = await gatehouse.user.update({ firstName: null });
  try {
    await gatehouse.signIn.password({ email: 'ada@example.com', password: 'x' });
  } catch (error) {
    if (error instanceof GatehouseError) {
      const code: ErrorCode = error.code;
      // @ts-expect-error: the code is the catalogue's, and 'network_error' is not in it
      if (code === 'network_error') return [];
    }
  }
  // @ts-expect-error: the sign-up body has no such field
  await gatehouse.signUp({ ...params, nickname: 'ada' });
  return [user?.email ?? '', String(page.nextCursor), String(updated.user?.passwordEnabled)];
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
    { lib: ['ES2022', 'DOM', 'DOM.Iterable'], types: [] },
  );
}, 180_000);
afterAll(() => app?.remove());

describe('the built @gatehouse/js', () => {
  test('neither its JavaScript nor its declarations name @gatehouse/contract, and it has no dependencies', () => {
    const naming = filesOf(dist).filter((file) => /\.(js|d\.ts)$/.test(file) && NAMES_CONTRACT.test(readFileSync(file, 'utf8')));
    expect(naming).toEqual([]);
    expect(JSON.parse(readFileSync(join(packageDir, 'package.json'), 'utf8')).dependencies ?? {}).toEqual({});
  });

  test('a browser application that installs only @gatehouse/js typechecks against it', () => {
    expect(checked.output).toBe('');
    expect(checked.status).toBe(0);
  });

  test('a type error in that application is still reported (the check is live)', () => {
    const broken = `import type { User } from '@gatehouse/js';\nexport const name: number = ({} as User).email;\n`;
    const result = typecheck(app.dir, { 'broken.ts': broken }, { lib: ['ES2022', 'DOM'], types: [] });
    expect(result.output).toContain("Type 'string' is not assignable to type 'number'");
  }, 60_000);

  test('it loads in that application without the contract installed', () => {
    const result = runModule(app.dir, "const sdk = await import('@gatehouse/js'); console.log(typeof sdk.createGatehouse);");
    expect(result.output.trim()).toBe('function');
  });

  test('the types written into dist/contract.d.ts are the contract types', () => {
    expect(readFileSync(join(app.dir, 'same.ts'), 'utf8')).toContain('export const sameSessionUser: Equal<Written.SessionUser, Contract.SessionUser> = true;');
    expect(checked.output).toBe('');
  });
});
