import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { testDb } from '../helpers/store.js';

/**
 * Behind a proxy that TRUST_PROXY does not name, every client is the proxy's address, so one
 * client's failed sign-ins lock every client out. The server cannot fix that by itself (trusting
 * X-Forwarded-For from anyone would let a client choose its own address), so it says so: once in
 * the log and on the console's settings page (GET /v1/platform/instance).
 */
describe(`TRUST_PROXY unset behind a proxy (${testDb()})`, () => {
  const lines: { level: number; msg: string }[] = [];
  const stream = new Writable({
    write(chunk, _encoding, done) {
      for (const line of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(line) as { level: number; msg: string });
      done();
    },
  });
  let t: TestApp;
  let trusted: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ logger: { level: 'warn', stream } });
    trusted = await startTestApp({ trustProxy: ['10.0.0.1'] });
  });
  afterAll(async () => {
    await t.close();
    await trusted.close();
  });

  const status = (app: TestApp) => app.call({ method: 'GET', url: '/v1/platform/instance', credential: app.platformKey });
  const environment = (app: TestApp, remoteAddress: string, forwardedFor?: string) =>
    app.call({
      method: 'GET',
      url: '/v1/environment',
      credential: app.project.development.publishableKey,
      remoteAddress,
      headers: forwardedFor ? { 'x-forwarded-for': forwardedFor } : {},
    });

  it('one client locks every client out: X-Forwarded-For from an untrusted private peer is warned about once, in the log and on the settings page', async () => {
    expect((await status(t)).json()).toEqual({ trustProxy: false, proxyWarning: null });
    // A public peer sending the header is a client, not a proxy: nothing to say.
    await environment(t, '203.0.113.9', '198.51.100.1');
    // Without the header, a private peer is just a private client.
    await environment(t, '10.1.2.3');
    expect((await status(t)).json().proxyWarning).toBeNull();
    await environment(t, '10.1.2.3', '198.51.100.1');
    await environment(t, '127.0.0.1', '198.51.100.2');
    const answer = (await status(t)).json();
    expect(answer.proxyWarning).toMatchObject({ peer: '10.1.2.3', message: expect.stringContaining('TRUST_PROXY') });
    expect(lines.filter((l) => l.msg.includes('X-Forwarded-For'))).toHaveLength(1);
    expect(lines.find((l) => l.msg.includes('X-Forwarded-For'))!.level).toBe(40);
  });

  it('a trusted proxy is no warning; a second private proxy TRUST_PROXY does not name is', async () => {
    await environment(trusted, '10.0.0.1', '198.51.100.1');
    expect((await status(trusted)).json()).toEqual({ trustProxy: true, proxyWarning: null });
    await environment(trusted, '10.0.0.2', '198.51.100.1');
    expect((await status(trusted)).json().proxyWarning).toMatchObject({ peer: '10.0.0.2' });
  });

  it('the status is platform-only', async () => {
    expect((await t.call({ method: 'GET', url: '/v1/platform/instance', credential: t.project.development.secretKey })).statusCode).toBe(403);
  });
});
