import { crossTenant } from '../../src/db/tenant-scope.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, testClock, type TestApp } from '../helpers/app.js';
import { codeFrom, outbox, start } from '../helpers/flows.js';
import { signUp, uniqueEmail } from '../helpers/identity.js';

describe('email codes', () => {
  const clock = testClock();
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ now: clock.now });
  });
  afterAll(() => t.close());

  const verify = (email: string, code: string) => start(t, 'email-code/verify', { email, code });
  const wrong = (code: string) => String((Number(code) + 1) % 1_000_000).padStart(6, '0');

  it('emails a 6-digit code that signs a known user in once', async () => {
    const user = await signUp(t);
    expect((await start(t, 'email-code', { email: user.email })).statusCode).toBe(202);
    const [email] = await outbox(t, user.email);
    expect(email!.kind).toBe('email_code');
    const code = codeFrom(email!);
    expect(code).toMatch(/^\d{6}$/);
    const res = await verify(user.email, code);
    expect(res.statusCode).toBe(200);
    expect(res.json().user.id).toBe(user.userId);
    expect((await verify(user.email, code)).statusCode).toBe(401);
  });

  it('signs up an unknown address that verifies its code', async () => {
    const address = uniqueEmail('coder');
    await start(t, 'email-code', { email: address });
    const [email] = await outbox(t, address);
    expect(email!.kind).toBe('sign_up_code');
    const res = await verify(address, codeFrom(email!));
    expect(res.statusCode).toBe(200);
    expect(res.json().user.email).toBe(address);
  });

  it('voids a code after five wrong tries, even for the right code after', async () => {
    const user = await signUp(t);
    await start(t, 'email-code', { email: user.email });
    const code = codeFrom((await outbox(t, user.email))[0]!);
    const messages = [];
    for (let i = 0; i < 5; i++) {
      const res = await verify(user.email, wrong(code));
      expect(res.statusCode).toBe(401);
      messages.push(res.json().error.message);
    }
    expect(messages[0]).toContain('4 tries left');
    expect(messages[4]).toContain('now void');
    const late = await verify(user.email, code);
    expect(late.statusCode).toBe(401);
  });

  it('voids older codes when a newer one is sent', async () => {
    const user = await signUp(t);
    await start(t, 'email-code', { email: user.email });
    const first = codeFrom((await outbox(t, user.email))[0]!);
    await start(t, 'email-code', { email: user.email });
    const second = codeFrom((await outbox(t, user.email))[0]!);
    if (first !== second) expect((await verify(user.email, first)).statusCode).toBe(401);
    expect((await verify(user.email, second)).statusCode).toBe(200);
  });

  it('keeps the live code when a throttled request sends nothing, so others cannot void it', async () => {
    const user = await signUp(t);
    for (let i = 0; i < 5; i++) expect((await start(t, 'email-code', { email: user.email })).statusCode).toBe(202);
    const [latest] = await outbox(t, user.email);
    // Past the throttle: answered the same, nothing sent, and the emailed code stays valid.
    expect((await start(t, 'email-code', { email: user.email })).statusCode).toBe(202);
    expect(await outbox(t, user.email)).toHaveLength(5);
    expect((await verify(user.email, codeFrom(latest!))).statusCode).toBe(200);
  });

  it('expires after 10 minutes', async () => {
    const user = await signUp(t);
    await start(t, 'email-code', { email: user.email });
    const code = codeFrom((await outbox(t, user.email))[0]!);
    clock.advance(10 * 60_000 + 1);
    expect((await verify(user.email, code)).statusCode).toBe(401);
  });

  it('refuses a malformed code with 400 without spending a try', async () => {
    const res = await verify(uniqueEmail(), '12345a');
    expect(res.statusCode).toBe(400);
    expect(res.json().error.details.fields).toEqual(['code']);
  });

  it('stores codes only as keyed hashes', async () => {
    const user = await signUp(t);
    await start(t, 'email-code', { email: user.email });
    const code = codeFrom((await outbox(t, user.email))[0]!);
    const rows = await t.store.db.selectFrom('flow_tokens').select('secret_hash').modifyEnd(crossTenant('test: every stored code')).execute();
    expect(rows.some((r) => r.secret_hash.includes(code))).toBe(false);
    expect(rows.every((r) => /^[0-9a-f]{64}$/.test(r.secret_hash))).toBe(true);
  });
});
