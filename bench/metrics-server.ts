/**
 * Child process of metrics.bench.ts: the app without and with metrics (prom-client, the onResponse
 * hook), over one SQLite file, each on its own port, so the load generator runs on the other core.
 * Prints one JSON line with the ports and a signed-in user's access token.
 */
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { buildApp, type AppOptions } from '../packages/server/src/app.js';
import { FilesystemObjectStore } from '../packages/server/src/assets/filesystem-store.js';
import { migrate, openStore } from '../packages/server/src/db/index.js';
import { UnconfiguredTransport } from '../packages/server/src/mail/transport.js';
import { newSecret } from '../packages/server/src/lib/crypto.js';
import { deriveSubkey } from '../packages/server/src/lib/cursor.js';
import { Metrics } from '../packages/server/src/metrics/metrics.js';
import { TenancyService } from '../packages/server/src/tenancy/service.js';

const dir = mkdtempSync(path.join(os.tmpdir(), 'gh-bench-metrics-'));
const store = openStore({ sqliteFile: path.join(dir, 'bench.db') });
await migrate(store);
const tenancy = new TenancyService(store);
const { environments } = await tenancy.createProject({ name: 'Bench' });
const dev = environments.find((e) => e.environment.type === 'development')!.environment;
await tenancy.updateSettings(dev.id, { rateLimitPerMinute: 10_000_000, emailVerification: 'off' });
const instanceSecret = newSecret('', 48);
const base: AppOptions = {
  config: { baseUrl: 'http://bench.local' },
  store,
  platformKey: newSecret('plk_'),
  instanceSecret,
  objectStore: await FilesystemObjectStore.open({
    root: path.join(dir, 'objects'),
    baseUrl: 'http://bench.local',
    signingKey: deriveSubkey(instanceSecret, 'uploads'),
  }),
  mail: { transport: new UnconfiguredTransport(), startWorker: false },
  webhooks: { startWorker: false },
};
const apps: Record<string, FastifyInstance> = {
  baseline: await buildApp(base),
  metrics: await buildApp({ ...base, metrics: new Metrics(store) }),
};
const signedUp = await apps.baseline!.inject({
  method: 'POST',
  url: '/v1/auth/signup',
  headers: { authorization: `Bearer ${dev.publishableKey}` },
  payload: { email: 'bench@example.test', password: 'correct horse battery staple' },
});
const accessToken = (signedUp.json() as { session: { accessToken: string } }).session.accessToken;
const ports: Record<string, number> = {};
for (const [name, app] of Object.entries(apps)) {
  await app.listen({ port: 0, host: '127.0.0.1' });
  const address = app.server.address();
  ports[name] = typeof address === 'object' && address ? address.port : 0;
}
process.stdout.write(`${JSON.stringify({ ports, accessToken })}\n`);
process.on('SIGTERM', () => {
  void Promise.all(Object.values(apps).map((app) => app.close()))
    .then(() => store.close())
    .finally(() => process.exit(0));
});
