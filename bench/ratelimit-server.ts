/**
 * Child process of ratelimit.bench.ts: the app's variants (bench/lib/ratelimit-apps.ts), each on its
 * own port, so the load generator runs on the other core. Prints one JSON line with the ports and a
 * publishable key.
 */
import { buildRateLimitVariants } from './lib/ratelimit-apps.js';

const variants = await buildRateLimitVariants();
const ports: Record<string, number> = {};
for (const [name, app] of Object.entries(variants.apps)) {
  await app.listen({ port: 0, host: '127.0.0.1' });
  const address = app.server.address();
  ports[name] = typeof address === 'object' && address ? address.port : 0;
}
process.stdout.write(
  `${JSON.stringify({ ports, publishableKey: variants.publishableKey, environmentId: variants.environmentId, redisPrefix: variants.redisPrefix })}\n`,
);
process.on('SIGTERM', () => {
  void variants.close().finally(() => process.exit(0));
});
