import { defineConfig } from 'vitest/config';
import { skippedSuites, SkippedSuitesReporter } from './vitest.skipped.js';

/**
 * One suite, two databases. Every test outside test/unit runs once on SQLite and once on
 * PostgreSQL. PostgreSQL needs DATABASE_URL: outside CI its absence skips that project, loudly
 * (before the run and again after its summary); under CI=true it is an error (see .ci/run).
 */
const postgres = process.env.DATABASE_URL;
if (process.env.CI === 'true') {
  if (!postgres) throw new Error('CI=true but DATABASE_URL is unset: the PostgreSQL suite must run in CI.');
  if (!process.env.REDIS_URL) throw new Error('CI=true but REDIS_URL is unset: the Redis tests must run in CI.');
}
const skipped = skippedSuites(process.env);
if (skipped.length > 0) console.warn(`\n${skipped.join('\n\n')}\n`);

// As in main.ts: the AWS SDK's notice that its releases after January 2027 need Node 22 does not
// apply to the locked version, and would be printed by every S3 test file.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

const serverTests = 'packages/server/test/**/*.test.ts';
const unitTests = 'packages/server/test/unit/**/*.test.ts';

/**
 * Test files in parallel. Vitest's default is one worker fewer than the cores, so one on a 2-core
 * machine; most files spend their time waiting on PostgreSQL, Redis, a server process, Chromium or
 * argon2's own threads, and every file has its own schema, Redis prefix, ports and data directory.
 */
const maxWorkers = Number(process.env.GATEHOUSE_TEST_WORKERS ?? 2);

export default defineConfig({
  test: {
    maxWorkers,
    testTimeout: 20_000,
    hookTimeout: 30_000,
    // expect.poll waits 1 s by default: a browser's answer on a loaded CI runner can take longer.
    // A poll that passes returns at once.
    expect: { poll: { timeout: 10_000 } },
    reporters: ['default', new SkippedSuitesReporter(skipped)],
    projects: [
      { extends: true, test: { name: 'unit', include: [unitTests] } },
      { extends: true, test: { name: 'backend', include: ['packages/backend/test/**/*.test.ts'] } },
      // The same verification tests with node:crypto hidden from @gatehouse/backend: WebCrypto, as on the Edge runtime.
      {
        extends: true,
        test: {
          name: 'backend-webcrypto',
          include: ['packages/backend/test/{verify-token,verify-token.security,jwks-cache,api-keys,machine-tokens.security,impersonation}.test.ts'],
          setupFiles: ['packages/backend/test/helpers/without-node-crypto.ts'],
        },
      },
      // @gatehouse/nextjs: its request logic in node (the example's test drives it in Chromium).
      { extends: true, test: { name: 'nextjs', include: ['packages/nextjs/test/**/*.test.ts'] } },
      // Every bench, briefly: a broken bench fails here (bench/smoke.test.ts).
      { extends: true, test: { name: 'bench', include: ['bench/**/*.test.ts'] } },
      // @gatehouse/js: node tests of the state machine and flows, and the real-browser suite.
      { extends: true, test: { name: 'js', include: ['packages/js/test/**/*.test.ts'], testTimeout: 60_000 } },
      // @gatehouse/react: its components in Chromium against a real Gatehouse.
      { extends: true, test: { name: 'react', include: ['packages/react/test/**/*.test.ts', 'examples/*/test/**/*.test.ts'], testTimeout: 60_000 } },
      // The console in Chromium against a real server.
      { extends: true, test: { name: 'console', include: ['packages/console/test/**/*.test.ts'], testTimeout: 60_000 } },
      { extends: true, test: { name: 'sqlite', include: [serverTests], exclude: [unitTests], env: { GATEHOUSE_TEST_DB: 'sqlite' } } },
      ...(postgres
        ? [
            {
              extends: true as const,
              test: { name: 'postgres', include: [serverTests], exclude: [unitTests], env: { GATEHOUSE_TEST_DB: 'postgres' } },
            },
          ]
        : []),
    ],
  },
});
