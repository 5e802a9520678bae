import { defineConfig } from 'vitest/config';

/**
 * One suite, two databases. Every test outside test/unit runs once on SQLite and once on
 * PostgreSQL. PostgreSQL needs DATABASE_URL: outside CI its absence skips that project, loudly;
 * under CI=true it is an error (see .ci/run).
 */
const postgres = process.env.DATABASE_URL;
if (!postgres) {
  if (process.env.CI === 'true') throw new Error('CI=true but DATABASE_URL is unset: the PostgreSQL suite must run in CI.');
  console.warn('\n[gatehouse] PostgreSQL suite SKIPPED: DATABASE_URL is unset. Set it to run every test on PostgreSQL too.\n');
}
if (!process.env.REDIS_URL) {
  if (process.env.CI === 'true') throw new Error('CI=true but REDIS_URL is unset: the Redis tests must run in CI.');
  console.warn('[gatehouse] Redis tests SKIPPED: REDIS_URL is unset.\n');
}

const serverTests = 'packages/server/test/**/*.test.ts';
const unitTests = 'packages/server/test/unit/**/*.test.ts';

export default defineConfig({
  test: {
    testTimeout: 20_000,
    hookTimeout: 30_000,
    projects: [
      { extends: true, test: { name: 'unit', include: [unitTests] } },
      // @gatehouse/js: node tests of the state machine and flows, and the real-browser suite.
      { extends: true, test: { name: 'js', include: ['packages/js/test/**/*.test.ts'], testTimeout: 60_000 } },
      { extends: true, test: { name: 'sqlite', include: [serverTests], exclude: [unitTests], env: { GATEHOUSE_TEST_DB: 'sqlite' } } },
      ...(postgres
        ? [
            {
              extends: true,
              test: { name: 'postgres', include: [serverTests], exclude: [unitTests], env: { GATEHOUSE_TEST_DB: 'postgres' } },
            },
          ]
        : []),
    ],
  },
});
