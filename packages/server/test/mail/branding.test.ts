import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { outbox, REDIRECT, start } from '../helpers/flows.js';
import { uniqueEmail } from '../helpers/identity.js';
import { makePng } from '../helpers/images.js';

describe('the project logo in flow emails', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  const logo = (method: 'PUT' | 'DELETE', payload?: Buffer) =>
    t.call({
      method,
      url: `/v1/platform/projects/${t.project.id}/logo`,
      credential: t.platformKey,
      ...(payload ? { payload, headers: { 'content-type': 'image/png' } } : {}),
    });

  async function latestEmail() {
    const address = uniqueEmail('branded');
    expect((await start(t, 'magic-link', { email: address, redirectUrl: REDIRECT })).statusCode).toBe(202);
    const [email] = await outbox(t, address);
    return email!;
  }

  it('carries the uploaded logo as an <img>, and stops once it is removed', async () => {
    expect((await latestEmail()).html).not.toContain('<img');

    const uploaded = await logo('PUT', makePng(6, 4, { seed: 31 }));
    expect(uploaded.statusCode, uploaded.body).toBe(200);
    const { logoUrl } = uploaded.json();
    const email = await latestEmail();
    expect(email.html).toContain(`<img src="${logoUrl}" alt="Test project" height="48">`);
    // The URL serves the logo.
    const served = await t.app.inject({ method: 'GET', url: new URL(logoUrl).pathname });
    expect(served.statusCode).toBe(200);
    expect(served.headers['content-type']).toBe('image/png');

    expect((await logo('DELETE')).statusCode).toBe(204);
    expect((await latestEmail()).html).not.toContain('<img');
  });
});
