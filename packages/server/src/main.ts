import path from 'node:path';
import { buildApp } from './app.js';
import { describeObjectStore, openObjectStore } from './assets/stores.js';
import { checkInstanceSecret, ensureDefaultProject, loadInstanceSecrets, type DefaultProject } from './bootstrap.js';
import { ConfigError, loadConfig } from './config.js';
import { migrate, openStore } from './db/index.js';
import { SmtpTransport, UnconfiguredTransport } from './mail/transport.js';
import { loggerOptions } from './http/logging.js';
import { Metrics } from './metrics/metrics.js';
import { listenForScrapes } from './metrics/plugin.js';
import { startTracing } from './telemetry/tracing.js';
import { emailCollisionWarning } from './identity/email-collisions.js';

/** How long requests under way may take to finish after SIGTERM. */
const SHUTDOWN_DRAIN_MS = 10_000;

async function main(): Promise<void> {
  const config = loadConfig();
  // First: the instrumentations must see pg and ioredis required, and the app created.
  const tracing = config.otel ? startTracing(config.otel) : undefined;
  const secrets = loadInstanceSecrets(config);
  const store = openStore({
    databaseUrl: config.databaseUrl,
    sqliteFile: path.join(config.dataDir, 'gatehouse.db'),
    ...(config.databaseSchema ? { postgresSchema: config.databaseSchema } : {}),
  });
  await migrate(store, config.databaseSchema);
  await checkInstanceSecret(store, secrets.instanceSecret);
  const created = await ensureDefaultProject(store);
  // The AWS SDK warns on Node 20 that its releases after January 2027 will need Node 22; the
  // version locked here runs on Node 20, and package.json's engines says what Gatehouse supports.
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
  const objectStore = await openObjectStore(config, secrets.instanceSecret);

  const metrics = config.metrics ? new Metrics(store) : undefined;
  const app = await buildApp({
    config,
    metrics,
    store,
    platformKey: secrets.platformKey,
    instanceSecret: secrets.instanceSecret,
    objectStore,
    logger: loggerOptions(config.logLevel),
    mail: {
      transport: config.smtpUrl ? new SmtpTransport(config.smtpUrl, config.smtpFrom) : new UnconfiguredTransport(),
      startWorker: config.emailWorker,
    },
    redis: config.redisUrl ? { url: config.redisUrl, prefix: config.redisPrefix } : undefined,
    trustProxy: config.trustProxy,
    auditRetentionDays: config.auditRetentionDays,
  });
  await app.listen({ port: config.port, host: config.host });
  const metricsServer = metrics && config.metrics ? await listenForScrapes(metrics, config.metrics.port, config.metrics.host) : undefined;
  // Before the banner, which tells a supervisor the node is up: a SIGTERM from then on is graceful.
  // SIGTERM: new requests get 503 (error-handler.ts) and the listener stops; requests under way get
  // up to SHUTDOWN_DRAIN_MS, then their connections are cut; the workers give back what they
  // claimed and did not send (their stop()), so another node sends it.
  let stopping = false;
  const shutdown = async (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    app.log.info({ signal }, 'shutting down');
    const cut = setTimeout(() => app.server.closeAllConnections(), SHUTDOWN_DRAIN_MS);
    // A close that hangs (a database that never answers) must still end the process.
    const abandon = setTimeout(() => {
      process.stderr.write('Gatehouse did not shut down within 20 s; exiting.\n');
      process.exit(1);
    }, 20_000);
    abandon.unref();
    await app.close();
    clearTimeout(cut);
    metricsServer?.close();
    await objectStore.close();
    await store.close();
    await tracing?.shutdown().catch(() => undefined);
    process.exit(0);
  };
  process.once('SIGINT', shutdown);
  process.once('SIGTERM', shutdown);

  const lines = [
    '',
    'Gatehouse is running.',
    `  Base URL:      ${config.baseUrl}`,
    `  Console:       ${config.baseUrl}/console`,
    `  Database:      ${store.dialect === 'sqlite' ? `SQLite at ${path.join(config.dataDir, 'gatehouse.db')}` : `PostgreSQL${config.databaseSchema ? `, schema ${config.databaseSchema}` : ''}`}`,
    `  Rate limits:   ${config.redisUrl ? 'shared through Redis (REDIS_URL)' : 'in memory, per node (set REDIS_URL to run several nodes)'}`,
    `  Object store:  ${describeObjectStore(config)}`,
    ...(config.otel
      ? [`  Traces:        OTLP/HTTP (${config.otel.protocol}) to ${config.otel.endpoint} (OTEL_EXPORTER_OTLP_ENDPOINT)`]
      : []),
    ...(config.metrics ? [`  Metrics:       http://${config.metrics.host}:${config.metrics.port}/metrics (METRICS_PORT)`] : []),
    `  Client IP:     ${config.trustProxy ? `X-Forwarded-For from ${config.trustProxy.join(', ')} (TRUST_PROXY)` : "the connection's peer (set TRUST_PROXY behind a proxy)"}`,
  ];
  if (secrets.platformKeyGenerated) {
    lines.push(`  Platform key:  ${secrets.platformKey}`, `                 (generated; saved in ${secrets.platformKeyFile})`);
  }
  if (created) lines.push(...describeDefaultProject(created, config.baseUrl));
  // Printed at every start while no operator exists, so existing installations get one too.
  const setupLink = await app.operators.setupLinkIfNoOperator();
  if (setupLink) {
    lines.push(
      '',
      'No operator yet. Open this one-time link to create the first operator of the console:',
      `  ${setupLink}`,
      '  (it works once; while no operator exists, every start prints a new one)',
    );
  }
  if (config.databaseUrl && !config.s3) {
    lines.push(
      '',
      "Warning: PostgreSQL is configured but objects (uploaded images) are stored on this node's disk.",
      'Another node sharing the database answers 404 for them. To run more than one node, set S3_*',
      'for an S3-compatible store (AWS S3, MinIO, R2…); see docs/scaling.md.',
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
}

/** First start: each environment of the Default project, with what a backend needs to verify its tokens. */
function describeDefaultProject(created: DefaultProject, baseUrl: string): string[] {
  const lines = ['', `Created "Default project" (${created.projectId}).`];
  for (const environment of created.environments) {
    const issuer = `${baseUrl}/v1/environments/${environment.id}`;
    lines.push(
      '',
      `  ${environment.type === 'development' ? 'Development' : 'Production'} environment ${environment.id}`,
      `    Publishable key: ${environment.publishableKey}`,
    );
    if (environment.secretKey) {
      lines.push(
        `    Secret key:      ${environment.secretKey}`,
        '                     (shown once: only a hash is stored, so save it now)',
      );
    } else {
      lines.push(
        '    Secret key:      none yet; create one when you need it (shown once):',
        `                     curl -X POST -H "Authorization: Bearer <platform key>" ${baseUrl}/v1/platform/environments/${environment.id}/secret-keys`,
      );
    }
    lines.push(`    Issuer:          ${issuer}`, `    JWKS URL:        ${issuer}/.well-known/jwks.json`);
  }
  const development = created.environments.find((e) => e.type === 'development')!;
  lines.push('', 'Try it:', `  curl -H "Authorization: Bearer ${development.publishableKey}" ${baseUrl}/v1/environment`);
  return lines;
}

main().catch((error: unknown) => {
  if (error instanceof ConfigError) {
    process.stderr.write(`Configuration error: ${error.message}\n`);
  } else {
    process.stderr.write(`Gatehouse could not start: ${error instanceof Error ? error.message : String(error)}\n`);
  }
  process.exit(1);
});
