/**
 * `npm run migrate`: applies the pending migrations (and builds the indexes PostgreSQL builds
 * concurrently) and exits, configured like the server (DATABASE_URL, DATABASE_SCHEMA,
 * GATEHOUSE_DATA_DIR). Every node migrates at start anyway; this is for a deployment step that
 * runs before the new nodes (the Helm chart's migration Job), so a slow upgrade holds no node's
 * start and a failed one is seen before any node rolls.
 */
import path from 'node:path';
import { ConfigError, loadConfig } from '../config.js';
import { migrate, missingMigrations, openStore } from '../db/index.js';

async function main(): Promise<void> {
  const config = loadConfig();
  const store = openStore({
    databaseUrl: config.databaseUrl,
    sqliteFile: path.join(config.dataDir, 'gatehouse.db'),
    ...(config.databaseSchema ? { postgresSchema: config.databaseSchema } : {}),
  });
  try {
    const pending = await missingMigrations(store.db);
    await migrate(store, config.databaseSchema);
    process.stdout.write(
      pending.length === 0 ? 'The database is up to date.\n' : `Applied ${pending.length} migration(s): ${pending.join(', ')}.\n`,
    );
  } finally {
    await store.close();
  }
}

main().catch((error: unknown) => {
  const message =
    error instanceof ConfigError
      ? `Configuration error: ${error.message}`
      : `Migration failed: ${error instanceof Error ? error.message : String(error)}`;
  process.stderr.write(`${message}\n`);
  process.exit(1);
});
