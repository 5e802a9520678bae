import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, testClock, type TestApp } from '../helpers/app.js';
import { plainUser } from '../helpers/organizations.js';
import { createEndpoint, platformCall, startReceiver } from './receiver.js';

describe('webhook attacks', () => {
  const clock = testClock();
  let t: TestApp;
  const lookups: string[] = [];
  beforeAll(async () => {
    t = await startTestApp({
      now: clock.now,
      webhooks: {
        clock: clock.now,
        resolve: async (host) => {
          lookups.push(host);
          // A name that passed creation, re-pointed at loopback afterwards (DNS rebinding).
          if (host === 'rebind.example.com') return [{ address: '127.0.0.1', family: 4 }];
          // One public and one private record: the private one must not be reachable either.
          if (host === 'mixed.example.com')
            return [
              { address: '93.184.216.34', family: 4 },
              { address: '10.0.0.7', family: 4 },
            ];
          if (host === 'metadata.example.com') return [{ address: '169.254.169.254', family: 4 }];
          if (host === 'mapped.example.com') return [{ address: '::ffff:127.0.0.1', family: 6 }];
          throw new Error(`unknown host ${host}`);
        },
      },
    });
  });
  afterAll(() => t.close());

  it('SSRF: a production endpoint at a private address is refused at creation', async () => {
    for (const url of [
      'https://127.0.0.1/x',
      'https://10.0.0.1/x',
      'https://169.254.169.254/latest/meta-data',
      'https://localhost/x',
      'https://[::1]/x',
      'http://hooks.example.com/x',
    ]) {
      const res = await platformCall(t, 'POST', `/v1/platform/environments/${t.project.production.id}/webhook-endpoints`, { url });
      expect(res.statusCode, url).toBe(400);
      expect(res.json().error.code).toBe('invalid_request');
    }
  });

  it.each([
    'https://localhost./x',
    'https://foo.localhost../x',
    'https://[::127.0.0.1]/x',
    'https://[::ffff:7f00:1]/x',
    'https://[::ffff:0:a00:1]/x',
    'https://[64:ff9b::a9fe:a9fe]/x',
    'https://[2002:c0a8:101::1]/x',
    'https://2130706433/x',
    'https://0177.0.0.1/x',
    'https://0x7f.1/x',
    'https://127.1/x',
  ])('SSRF: a production endpoint at a disguised local address (%s) is refused at creation', async (url) => {
    const res = await platformCall(t, 'POST', `/v1/platform/environments/${t.project.production.id}/webhook-endpoints`, { url });
    expect(res.statusCode, url).toBe(400);
    expect(res.json().error.code).toBe('invalid_request');
  });

  it.each(['rebind.example.com', 'mixed.example.com', 'metadata.example.com', 'mapped.example.com'])(
    'DNS rebinding: a production endpoint whose name (%s) resolves to a private address is refused at send time',
    async (host) => {
      const receiver = await startReceiver();
      try {
        const project = await t.createProject('Rebind');
        const env = project.production;
        const endpoint = await createEndpoint(t, env.id, { url: `https://${host}:${receiver.port}/hook` });
        await plainUser(t, env, 'victim');
        await t.app.webhooks.drain();
        expect(lookups).toContain(host);
        expect(receiver.received).toHaveLength(0);
        const log = (await platformCall(t, 'GET', `/v1/platform/environments/${env.id}/webhook-endpoints/${endpoint.id}/deliveries`)).json()
          .data;
        expect(log.at(-1)).toMatchObject({
          attempt: 1,
          status: 'failed',
          responseStatus: null,
          error: expect.stringMatching(/loopback, private or link-local/),
        });
      } finally {
        await receiver.close();
      }
    },
  );

  it('the same name is delivered to in development, where local receivers are allowed', async () => {
    const receiver = await startReceiver();
    try {
      const env = (await t.createProject('Dev rebind')).development;
      await createEndpoint(t, env.id, { url: `https://rebind.example.com:${receiver.port}/hook` });
      await plainUser(t, env, 'dev');
      await t.app.webhooks.drain();
      // https to a plain-http receiver fails the TLS handshake, but the connection went to the checked address.
      const attempts = await t.store.db.selectFrom('webhook_deliveries').select(['error']).where('environment_id', '=', env.id).execute();
      expect(attempts[0]!.error ?? '').not.toMatch(/loopback, private or link-local/);
    } finally {
      await receiver.close();
    }
  });

  it("cross-tenant: one environment's events never reach another environment's endpoint", async () => {
    const receiver = await startReceiver();
    try {
      const a = (await t.createProject('A')).development;
      const b = (await t.createProject('B')).development;
      await createEndpoint(t, a.id, { url: receiver.url });
      await plainUser(t, b, 'other-tenant');
      await t.app.webhooks.drain();
      expect(receiver.received).toHaveLength(0);
      await plainUser(t, a, 'own-tenant');
      await t.app.webhooks.drain();
      expect(receiver.received).toHaveLength(1);
    } finally {
      await receiver.close();
    }
  });

  it("cross-tenant: an endpoint is not reachable through another environment's path", async () => {
    const a = (await t.createProject('A2')).development;
    const b = (await t.createProject('B2')).development;
    const endpoint = await createEndpoint(t, a.id, { url: 'http://localhost:9/x' });
    for (const res of [
      await platformCall(t, 'GET', `/v1/platform/environments/${b.id}/webhook-endpoints/${endpoint.id}`),
      await platformCall(t, 'PATCH', `/v1/platform/environments/${b.id}/webhook-endpoints/${endpoint.id}`, { url: 'http://localhost:1/y' }),
      await platformCall(t, 'POST', `/v1/platform/environments/${b.id}/webhook-endpoints/${endpoint.id}/rotate-secret`),
      await platformCall(t, 'DELETE', `/v1/platform/environments/${b.id}/webhook-endpoints/${endpoint.id}`),
    ]) {
      expect(res.statusCode).toBe(404);
    }
  });

  it('only the platform key manages endpoints: a secret key is refused', async () => {
    const res = await t.call({
      method: 'POST',
      url: `/v1/platform/environments/${t.project.development.id}/webhook-endpoints`,
      credential: t.project.development.secretKey,
      payload: { url: 'http://localhost:9/x' },
    });
    expect(res.statusCode).toBe(403);
    expect(res.json().error.code).toBe('credential_not_accepted');
  });
});
