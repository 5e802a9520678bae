import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { createEndpoint, platformCall } from './receiver.js';

describe('webhook endpoints (platform API)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  const base = () => `/v1/platform/environments/${t.project.development.id}/webhook-endpoints`;

  it('creates an endpoint with a whsec_ secret shown once, then reads, lists, changes and deletes it', async () => {
    const created = await platformCall(t, 'POST', base(), {
      url: 'http://localhost:4000/hooks',
      eventTypes: ['user.created'],
      description: 'CRM sync',
    });
    expect(created.statusCode, created.body).toBe(201);
    const endpoint = created.json();
    expect(endpoint).toMatchObject({
      id: expect.stringMatching(/^whe_/),
      url: 'http://localhost:4000/hooks',
      eventTypes: ['user.created'],
      description: 'CRM sync',
      enabled: true,
      secret: expect.stringMatching(/^whsec_[A-Za-z0-9+/]{43}=$/),
      createdAt: expect.any(Number),
    });

    const read = await platformCall(t, 'GET', `${base()}/${endpoint.id}`);
    expect(read.statusCode).toBe(200);
    expect(read.json()).not.toHaveProperty('secret');
    expect(read.json().health).toEqual({ recentAttempts: 0, recentFailures: 0, failureRate: null });
    expect(read.body).not.toContain(endpoint.secret.slice(6));

    const list = await platformCall(t, 'GET', base());
    expect(list.json().data.map((e: { id: string }) => e.id)).toContain(endpoint.id);
    expect(list.body).not.toContain(endpoint.secret.slice(6));

    const patched = await platformCall(t, 'PATCH', `${base()}/${endpoint.id}`, { eventTypes: null, enabled: false, description: null });
    expect(patched.statusCode, patched.body).toBe(200);
    expect(patched.json()).toMatchObject({ eventTypes: null, enabled: false, description: null, url: 'http://localhost:4000/hooks' });

    const deleted = await platformCall(t, 'DELETE', `${base()}/${endpoint.id}`);
    expect(deleted.statusCode).toBe(200);
    expect(deleted.json()).toEqual({ id: endpoint.id, deleted: true });
    expect((await platformCall(t, 'GET', `${base()}/${endpoint.id}`)).statusCode).toBe(404);
  });

  it('stores the secret sealed, never in clear', async () => {
    const endpoint = await createEndpoint(t, t.project.development.id, { url: 'http://127.0.0.1:4000/x' });
    const row = await t.store.db
      .selectFrom('webhook_endpoints')
      .select('secret')
      .where('environment_id', '=', t.project.development.id)
      .where('id', '=', endpoint.id)
      .executeTakeFirstOrThrow();
    expect(row.secret).not.toContain(endpoint.secret.slice(6));
    expect(row.secret).toMatch(/^v1\./);
  });

  it('rotates the secret: a new one, shown once', async () => {
    const endpoint = await createEndpoint(t, t.project.development.id, { url: 'http://127.0.0.1:4000/x' });
    const rotated = await platformCall(t, 'POST', `${base()}/${endpoint.id}/rotate-secret`);
    expect(rotated.statusCode, rotated.body).toBe(200);
    expect(rotated.json()).toEqual({ secret: expect.stringMatching(/^whsec_/) });
    expect(rotated.json().secret).not.toBe(endpoint.secret);
  });

  it('refuses an unknown event type and an unknown field in the error shape', async () => {
    for (const payload of [
      { url: 'https://hooks.example.com/a', eventTypes: ['user.exploded'] },
      { url: 'https://hooks.example.com/a', secret: 'mine' },
    ]) {
      const res = await platformCall(t, 'POST', base(), payload);
      expect(res.statusCode, res.body).toBe(400);
      expect(res.json().error.code).toBe('invalid_request');
    }
  });

  it.each([
    ['development', 'http://localhost:3000/hook', 201],
    ['development', 'http://127.0.0.1:3000/hook', 201],
    ['development', 'https://hooks.example.com/gatehouse', 201],
    ['development', 'http://hooks.example.com/gatehouse', 400],
    ['development', 'ftp://hooks.example.com/gatehouse', 400],
    ['production', 'https://hooks.example.com/gatehouse', 201],
    ['production', 'http://hooks.example.com/gatehouse', 400],
    ['production', 'https://localhost/hook', 400],
    ['production', 'https://api.localhost/hook', 400],
    ['production', 'https://127.0.0.1/hook', 400],
    ['production', 'https://10.1.2.3/hook', 400],
    ['production', 'https://172.16.0.1/hook', 400],
    ['production', 'https://192.168.1.10/hook', 400],
    ['production', 'https://169.254.169.254/latest/meta-data', 400],
    ['production', 'https://[::1]/hook', 400],
    ['production', 'https://[fe80::1]/hook', 400],
    ['production', 'https://[fd00::1]/hook', 400],
    ['production', 'https://[::ffff:127.0.0.1]/hook', 400],
    ['production', 'https://user:pass@hooks.example.com/hook', 400],
    ['production', 'not a url', 400],
  ] as const)('a %s endpoint at %s answers %d', async (type, url, status) => {
    const res = await platformCall(t, 'POST', `/v1/platform/environments/${t.project[type].id}/webhook-endpoints`, { url });
    expect(res.statusCode, res.body).toBe(status);
    if (status === 400) {
      expect(res.json().error).toMatchObject({ code: 'invalid_request', message: expect.stringContaining('url') });
    }
  });

  it('applies the URL rules to a change of url too', async () => {
    const endpoint = await createEndpoint(t, t.project.production.id, { url: 'https://hooks.example.com/a' });
    const res = await platformCall(t, 'PATCH', `/v1/platform/environments/${t.project.production.id}/webhook-endpoints/${endpoint.id}`, {
      url: 'https://192.168.0.1/a',
    });
    expect(res.statusCode).toBe(400);
    expect(res.json().error.code).toBe('invalid_request');
  });

  it('answers 404 in the error shape for an unknown endpoint and environment', async () => {
    for (const res of [
      await platformCall(t, 'GET', `${base()}/whe_nope`),
      await platformCall(t, 'PATCH', `${base()}/whe_nope`, { enabled: true }),
      await platformCall(t, 'DELETE', `${base()}/whe_nope`),
      await platformCall(t, 'POST', `${base()}/whe_nope/rotate-secret`),
      await platformCall(t, 'GET', `${base()}/whe_nope/deliveries`),
      await platformCall(t, 'GET', '/v1/platform/environments/env_nope/webhook-endpoints'),
    ]) {
      expect(res.statusCode, res.body).toBe(404);
      expect(res.json().error.code).toBe('not_found');
    }
  });
});
