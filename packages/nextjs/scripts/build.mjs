// The package's build: tsc, then the interstitial's script. npm runs the workspaces' `prepare`
// scripts in alphabetical order, so at install @gatehouse/react (after "nextjs") is not built yet:
// its build runs first here when its declarations are missing (its own `prepare` runs again later).
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const run = (command, args, cwd = root) => execFileSync(command, args, { cwd, stdio: 'inherit' });

for (const dependency of ['js', 'backend', 'react']) {
  const dir = fileURLToPath(new URL(`../../${dependency}/`, import.meta.url));
  if (!existsSync(`${dir}dist/index.d.ts`)) run('npm', ['run', 'build'], dir);
}
run(process.execPath, [fileURLToPath(new URL('../../../node_modules/typescript/bin/tsc', import.meta.url)), '-p', 'tsconfig.build.json']);
run(process.execPath, ['scripts/bundle-interstitial.mjs']);
