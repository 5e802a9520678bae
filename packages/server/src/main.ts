import path from 'node:path';
import { buildApp } from './app.js';
import { describeObjectStore, openObjectStore } from './assets/stores.js';
import { checkInstanceSecret, ensureDefaultProject, loadInstanceSecrets } from './bootstrap.js';
import { ConfigError, loadConfig } from './config.js';
import { migrate, openStore } from './db/index.js';
import { SmtpTransport, UnconfiguredTransport } from './flows/transport.js';
import { emailCollisionWarning } from './identity/email-collisions.js';

async function main(): Promise<void> {
  const config = loadConfig();
  const secrets = loadInstanceSecrets(config);
  const store = openStore({
    databaseUrl: config.databaseUrl,
    sqliteFile: path.join(config.dataDir, 'gatehouse.db'),
    ...(config.databaseSchema ? { postgresSchema: config.databaseSchema } : {}),
  });
  await migrate(store, config.databaseSchema);
  await checkInstanceSecret(store, secrets.instanceSecret);
  const created = await ensureDefaultProject(store);
  const objectStore = await openObjectStore(config, secrets.instanceSecret);

  const app = await buildApp({
    config,
    store,
    platformKey: secrets.platformKey,
    instanceSecret: secrets.instanceSecret,
    objectStore,
    // Fastify gives every request a child logger, even a silent one; with no logger it skips that.
    logger: config.logLevel === 'silent' ? false : { level: config.logLevel },
    mail: {
      transport: config.smtpUrl ? new SmtpTransport(config.smtpUrl, config.smtpFrom) : new UnconfiguredTransport(),
      startWorker: config.emailWorker,
    },
    redis: config.redisUrl ? { url: config.redisUrl, prefix: config.redisPrefix } : undefined,
    trustProxy: config.trustProxy,
  });
  await app.listen({ port: config.port, host: config.host });

  const lines = [
    '',
    'Gatehouse is running.',
    `  Base URL:      ${config.baseUrl}`,
    // DESIGN lists a console URL here; the console is not built yet, so say so rather than omit it.
    `  Console:       not built yet; operators use the platform API at ${config.baseUrl}/v1/platform`,
    `  Database:      ${store.dialect === 'sqlite' ? `SQLite at ${path.join(config.dataDir, 'gatehouse.db')}` : `PostgreSQL${config.databaseSchema ? `, schema ${config.databaseSchema}` : ''}`}`,
    `  Rate limits:   ${config.redisUrl ? 'shared through Redis (REDIS_URL)' : 'in memory, per node (set REDIS_URL to run several nodes)'}`,
    `  Object store:  ${describeObjectStore(config)}`,
    `  Client IP:     ${config.trustProxy ? `X-Forwarded-For from ${config.trustProxy.join(', ')} (TRUST_PROXY)` : 'the connection\'s peer (set TRUST_PROXY behind a proxy)'}`,
  ];
  if (secrets.platformKeyGenerated) {
    lines.push(`  Platform key:  ${secrets.platformKey}`, `                 (generated; saved in ${secrets.platformKeyFile})`);
  }
  if (created) {
    lines.push(
      '',
      'Created "Default project". Its development keys:',
      `  Publishable key: ${created.publishableKey}`,
      `  Secret key:      ${created.secretKey}`,
      '                   (shown once: only a hash is stored, so save it now)',
      '',
      'Try it:',
      `  curl -H "Authorization: Bearer ${created.publishableKey}" ${config.baseUrl}/v1/environment`,
    );
  }
  if (!config.smtpUrl) {
    lines.push(
      '',
      'Warning: SMTP_URL is not set. Development email is captured (GET /v1/dev/emails), but production',
      'email cannot be delivered: it waits in the outbox, with its error shown by the platform API.',
    );
  }
  lines.push(...(await emailCollisionWarning(store.db)));
  process.stdout.write(`${lines.join('\n')}\n\n`);

  const shutdown = async () => {
    await app.close();
    await objectStore.close();
    await store.close();
    process.exit(0);
  };
  process.once('SIGINT', shutdown);
  process.once('SIGTERM', shutdown);
}

main().catch((error: unknown) => {
  if (error instanceof ConfigError) {
    process.stderr.write(`Configuration error: ${error.message}\n`);
  } else {
    process.stderr.write(`Gatehouse could not start: ${error instanceof Error ? error.message : String(error)}\n`);
  }
  process.exit(1);
});
