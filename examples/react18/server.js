// The react-express example's backend, serving this package's build (the same page on React 18).
import { fileURLToPath } from 'node:url';
import { createExampleApp } from '../react-express/server.js';

export const DIST = fileURLToPath(new URL('./dist/', import.meta.url));

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { GATEHOUSE_URL = 'http://localhost:3000', GATEHOUSE_PUBLISHABLE_KEY, GATEHOUSE_SECRET_KEY, PORT = '5174' } = process.env;
  if (!GATEHOUSE_PUBLISHABLE_KEY || !GATEHOUSE_SECRET_KEY) {
    console.error("Set GATEHOUSE_PUBLISHABLE_KEY and GATEHOUSE_SECRET_KEY (one development environment's keys). See ../react-express/README.md.");
    process.exit(1);
  }
  const app = await createExampleApp({ gatehouseUrl: GATEHOUSE_URL, publishableKey: GATEHOUSE_PUBLISHABLE_KEY, secretKey: GATEHOUSE_SECRET_KEY, dist: DIST });
  app.listen(Number(PORT), 'localhost', () => console.log(`Example app on React 18: http://localhost:${PORT}`));
}
