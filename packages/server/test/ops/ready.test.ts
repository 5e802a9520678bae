import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { rawRequest } from '../helpers/raw-http.js';
import { freePort } from '../helpers/redis.js';
import { openTestStore } from '../helpers/store.js';

const get = (path: string) => `GET ${path} HTTP/1.1\r\nHost: gatehouse.test\r\nConnection: close\r\n\r\n`;

describe('GET /v1/ready', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  it('answers 200 with every check once the database answers and the migrations are applied', async () => {
    const res = await t.call({ method: 'GET', url: '/v1/ready' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ status: 'ready', database: 'ok', redis: 'disabled', migrations: 'ok' });
  });

  it('is in the OpenAPI document with its 503', async () => {
    const document = (await t.call({ method: 'GET', url: '/v1/openapi.json' })).json();
    const operation = document.paths['/v1/ready'].get;
    expect(operation.responses['200']).toBeDefined();
    expect(operation.responses['503']).toBeDefined();
  });
});

describe('GET /v1/ready while not ready', () => {
  it('answers 503 unavailable while a migration of this release is not applied', async () => {
    const store = await openTestStore();
    await sql`delete from kysely_migration where name = ${'0022_user_email_order'}`.execute(store.db);
    const t = await startTestApp({ store });
    try {
      const res = await t.call({ method: 'GET', url: '/v1/ready' });
      expect(res.statusCode).toBe(503);
      expect(res.json().error.code).toBe('unavailable');
      expect(res.json().error.message).toContain('0022_user_email_order');
      // Liveness is unaffected: the process is fine, it just must not take traffic.
      expect((await t.call({ method: 'GET', url: '/v1/health' })).statusCode).toBe(200);
    } finally {
      await t.close();
    }
  });

  it('answers 503 unavailable while the configured Redis is unreachable', async () => {
    const port = await freePort(); // nothing listens there
    const t = await startTestApp({ redis: { url: `redis://127.0.0.1:${port}`, commandTimeoutMs: 200 } });
    try {
      const res = await t.call({ method: 'GET', url: '/v1/ready' });
      expect(res.statusCode).toBe(503);
      expect(res.json().error).toMatchObject({ code: 'unavailable' });
      expect(res.json().error.message).toContain('Redis');
    } finally {
      await t.close();
    }
  });

  it('answers 503 unavailable with Connection: close once the node shuts down', async () => {
    let entered!: () => void;
    let release!: () => void;
    const closeBegan = new Promise<void>((resolve) => (entered = resolve));
    const held = new Promise<void>((resolve) => (release = resolve));
    const t = await startTestApp({
      routes: (app) => {
        app.addHook('preClose', async () => {
          entered();
          await held;
        });
      },
    });
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    const port = (t.app.server.address() as { port: number }).port;
    expect((await rawRequest(port, get('/v1/ready')))?.status).toBe(200);
    const closed = t.close();
    await closeBegan;
    const res = await rawRequest(port, get('/v1/ready'));
    expect(res?.status, res?.raw).toBe(503);
    expect(JSON.parse(res!.body).error.code).toBe('unavailable');
    expect(res!.headers.connection).toBe('close');
    release();
    await closed;
  });
});
