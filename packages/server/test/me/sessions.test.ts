import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { decodeJwt, GOOD_PASSWORD, json, me, refresh, signIn, signUp } from '../helpers/identity.js';

describe('GET and DELETE /v1/me/sessions', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  it("lists the caller's live sessions and marks the current one", async () => {
    const user = await signUp(t, { headers: { 'user-agent': 'TestBrowser/1.0' } });
    const other = json(await signIn(t, user.email, GOOD_PASSWORD)).session;
    const stranger = await signUp(t);

    const response = await t.call({ method: 'GET', url: '/v1/me/sessions', credential: user.accessToken });
    expect(response.statusCode).toBe(200);
    const { data } = json(response);
    expect(data).toHaveLength(2);
    const currentId = decodeJwt(user.accessToken).payload.sid;
    expect(data.find((s: { id: string }) => s.id === currentId)).toMatchObject({
      current: true,
      userAgent: 'TestBrowser/1.0',
      amr: ['pwd'],
    });
    expect(data.find((s: { id: string }) => s.id === decodeJwt(other.accessToken).payload.sid)).toMatchObject({ current: false });
    expect(data.map((s: { id: string }) => s.id)).not.toContain(decodeJwt(stranger.accessToken).payload.sid);
  });

  it("revokes one of my sessions; another user's session is 404", async () => {
    const user = await signUp(t);
    const other = json(await signIn(t, user.email, GOOD_PASSWORD)).session;
    const stranger = await signUp(t);
    const otherSid = decodeJwt(other.accessToken).payload.sid;

    const foreign = await t.call({
      method: 'DELETE',
      url: `/v1/me/sessions/${decodeJwt(stranger.accessToken).payload.sid}`,
      credential: user.accessToken,
    });
    expect(foreign.statusCode).toBe(404);
    expect((await me(t, stranger.accessToken)).statusCode).toBe(200);

    const response = await t.call({ method: 'DELETE', url: `/v1/me/sessions/${otherSid}`, credential: user.accessToken });
    expect(response.statusCode).toBe(204);
    expect(json(await me(t, other.accessToken)).error.code).toBe('session_revoked');
    expect(json(await refresh(t, other.refreshToken)).error.code).toBe('session_revoked');
    expect((await me(t, user.accessToken)).statusCode).toBe(200);

    const again = await t.call({ method: 'DELETE', url: `/v1/me/sessions/${otherSid}`, credential: user.accessToken });
    expect(again.statusCode).toBe(404);
  });
});
