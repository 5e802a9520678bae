// The example's backend: the built single-page app plus an API protected by @gatehouse/backend.
import { createGatehouseClient } from '@gatehouse/backend';
import { gatehouse, requireAuth } from '@gatehouse/backend/express';
import express from 'express';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/**
 * gatehouseUrl: your Gatehouse server root; publishableKey and secretKey: one environment's keys
 * (the console's environment page shows them). dist: the built page (default ./dist; examples/react18
 * serves the same page built on React 18).
 */
export async function createExampleApp({ gatehouseUrl, publishableKey, secretKey, dist = fileURLToPath(new URL('./dist/', import.meta.url)) }) {
  // The environment's id names the issuer every access token must carry.
  const response = await fetch(`${gatehouseUrl}/v1/environment`, { headers: { authorization: `Bearer ${publishableKey}` } });
  if (!response.ok) throw new Error(`Gatehouse at ${gatehouseUrl} refused the publishable key (${response.status}). Check GATEHOUSE_URL and GATEHOUSE_PUBLISHABLE_KEY.`);
  const environment = await response.json();
  // The issuer as Gatehouse names it (its public URL, which may differ from the address we reach
  // it at); the keys are fetched from the address we reach.
  const base = `${gatehouseUrl}/v1/environments/${environment.id}`;
  const discovery = await (await fetch(`${base}/.well-known/openid-configuration`)).json();
  const verify = { issuer: discovery.issuer, jwksUrl: `${base}/.well-known/jwks.json` };
  const admin = createGatehouseClient({ baseUrl: gatehouseUrl, secretKey });

  const app = express();
  app.get('/api/config', (_req, res) => res.json({ gatehouseUrl, publishableKey, environmentId: environment.id }));

  app.use('/api', gatehouse(verify), requireAuth());

  // The claims of the access token: fine for what the UI shows.
  app.get('/api/me', (req, res) => {
    const { userId, orgId, orgRole, orgSlug } = req.auth;
    res.json({ userId, orgId, orgRole, orgSlug });
  });

  // The live membership, read from Gatehouse now: a demoted admin is refused at once, even while
  // their access token still says "admin".
  app.get('/api/admin-report', async (req, res, next) => {
    try {
      const { userId, orgId } = req.auth;
      if (!orgId) return res.status(403).json({ error: { code: 'forbidden', message: 'Choose an organization first.' } });
      const member = await admin.members.get(orgId, userId).catch(() => null);
      if (!member || !['owner', 'admin'].includes(member.role)) {
        return res.status(403).json({ error: { code: 'forbidden', message: `Only owners and admins may read this report; your role is now ${member?.role ?? 'none'}.` } });
      }
      res.json({ organizationId: orgId, role: member.role, report: 'Q3 revenue: 1.2M' });
    } catch (error) {
      next(error);
    }
  });

  if (existsSync(dist)) {
    app.use(express.static(dist));
    app.get(/^(?!\/api\/).*/, (_req, res) => res.sendFile('index.html', { root: dist }));
  }
  return app;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { GATEHOUSE_URL = 'http://localhost:3000', GATEHOUSE_PUBLISHABLE_KEY, GATEHOUSE_SECRET_KEY, PORT = '5173' } = process.env;
  if (!GATEHOUSE_PUBLISHABLE_KEY || !GATEHOUSE_SECRET_KEY) {
    console.error('Set GATEHOUSE_PUBLISHABLE_KEY and GATEHOUSE_SECRET_KEY (one development environment\'s keys). See README.md.');
    process.exit(1);
  }
  const app = await createExampleApp({ gatehouseUrl: GATEHOUSE_URL, publishableKey: GATEHOUSE_PUBLISHABLE_KEY, secretKey: GATEHOUSE_SECRET_KEY });
  app.listen(Number(PORT), 'localhost', () => console.log(`Example app: http://localhost:${PORT}`));
}
