import { crossTenant } from '../../src/db/tenant-scope.js';
import type { KyselyPlugin, PluginTransformQueryArgs, PluginTransformResultArgs } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { THROTTLE } from '../../src/mail/outbox.js';
import { startTestApp, type TestApp, type TestEnvironment } from '../helpers/app.js';
import { outbox, REDIRECT, start } from '../helpers/flows.js';
import { signUp, uniqueEmail } from '../helpers/identity.js';
import { observable } from '../helpers/responses.js';
import { openTestStore } from '../helpers/store.js';

const FLOWS: Array<[string, (email: string) => object]> = [
  ['magic-link', (email) => ({ email, redirectUrl: REDIRECT })],
  ['email-code', (email) => ({ email })],
  ['password-reset', (email) => ({ email, redirectUrl: REDIRECT })],
];

describe('flow starts do not reveal whether an account exists', () => {
  let t: TestApp;
  let closed: TestEnvironment;
  beforeAll(async () => {
    t = await startTestApp();
    closed = (await t.createProject('Invite only')).development;
    await t.setSettings(closed.id, { signUp: false });
  });
  afterAll(() => t.close());

  it.each(FLOWS)('%s answers a known and an unknown address identically (sign-up open)', async (flow, payload) => {
    const known = await signUp(t);
    const a = await start(t, flow, payload(known.email));
    const b = await start(t, flow, payload(uniqueEmail('nobody')));
    expect(a.statusCode).toBe(202);
    expect(observable(b)).toEqual(observable(a));
  });

  it.each(FLOWS)('%s answers identically with sign-up closed, and sends the unknown address nothing', async (flow, payload) => {
    // Sign-up is closed, so the known user is created through the admin API.
    const user = await t.call({
      method: 'POST',
      url: '/v1/users',
      credential: closed.secretKey,
      payload: { email: uniqueEmail('member') },
    });
    expect(user.statusCode).toBe(201);
    const stranger = uniqueEmail('stranger');
    const a = await start(t, flow, payload(user.json().email), closed);
    const b = await start(t, flow, payload(stranger), closed);
    expect(observable(b)).toEqual(observable(a));
    expect(await outbox(t, user.json().email, closed)).toHaveLength(1);
    expect(await outbox(t, stranger, closed)).toHaveLength(0);
  });

  it.each(FLOWS)('%s may be called repeatedly; past 5 in 10 minutes it still answers the same but sends nothing', async (flow, payload) => {
    const user = await signUp(t);
    const answers = [];
    for (let i = 0; i < THROTTLE.perAddress + 2; i++) answers.push(observable(await start(t, flow, payload(user.email))));
    expect(new Set(answers.map((a) => JSON.stringify(a))).size).toBe(1);
    expect(await outbox(t, user.email)).toHaveLength(THROTTLE.perAddress);
  });
});

describe('recipient safety', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  it.each([
    'a@x.test,b@y.test',
    '"a@evil.test"@victim.test',
    'Eve <eve@evil.test>',
    'a@x.test b@y.test',
    'a@x.test\r\nBcc: b@y.test',
    'a@x.test;b@y.test',
  ])('refuses %j with 400 for every flow, sending nothing', async (email) => {
    for (const [flow, payload] of FLOWS) {
      const res = await start(t, flow, payload(email));
      expect(res.statusCode, flow).toBe(400);
      expect(res.json().error.details.fields).toEqual(['email']);
    }
    const all = await t.call({ method: 'GET', url: '/v1/dev/emails?limit=100', credential: t.project.development.secretKey });
    expect(all.json().data).toHaveLength(0);
  });

  it('sends to exactly the stored canonical address', async () => {
    const user = await signUp(t, { email: `Ada.${Date.now()}@Example.TEST` });
    expect(user.email).toMatch(/@example\.test$/);
    await start(t, 'magic-link', { email: `  ${user.email.replace('example.test', 'EXAMPLE.test')}  `, redirectUrl: REDIRECT });
    const [email] = await outbox(t, user.email);
    expect(email!.to).toBe(user.email);
  });

  it('stores link tokens only as hashes', async () => {
    const user = await signUp(t);
    await start(t, 'magic-link', { email: user.email, redirectUrl: REDIRECT });
    const [email] = await outbox(t, user.email);
    const token = new URL(/(https:\/\/\S+)/.exec(email!.text)![1]!).searchParams.get('token')!;
    const rows = await t.store.db.selectFrom('flow_tokens').selectAll().modifyEnd(crossTenant('test: every stored token')).execute();
    expect(JSON.stringify(rows)).not.toContain(token);
  });
});

/**
 * Records the statements the app sends to the flow tables: their kind and table, in order. Other
 * tables (credential and branding look-ups, which caches may or may not serve) are left out.
 */
class FlowWork implements KyselyPlugin {
  private static readonly TABLES = new Set(['users', 'flow_tokens', 'email_outbox']);
  recording = false;
  readonly statements: string[] = [];

  transformQuery(args: PluginTransformQueryArgs) {
    const table = firstTable(args.node);
    if (this.recording && table && FlowWork.TABLES.has(table)) this.statements.push(`${args.node.kind} ${table}`);
    return args.node;
  }

  async transformResult(args: PluginTransformResultArgs) {
    return args.result;
  }

  async during(work: () => Promise<unknown>): Promise<string[]> {
    this.statements.length = 0;
    this.recording = true;
    try {
      await work();
    } finally {
      this.recording = false;
    }
    return [...this.statements];
  }
}

function firstTable(node: unknown): string | undefined {
  if (node === null || typeof node !== 'object') return undefined;
  const n = node as { kind?: string; table?: { identifier?: { name?: string } } };
  if (n.kind === 'TableNode') return n.table?.identifier?.name;
  for (const child of Object.values(node as Record<string, unknown>)) {
    const found = firstTable(child);
    if (found) return found;
  }
  return undefined;
}

describe('timing probe: a flow start does the same work for an unknown address as for a known one', () => {
  // Answers alone cannot show this: a start that skipped its writes for an unknown address would
  // answer the same 202 and only be faster. So the statements themselves are compared.
  let t: TestApp;
  let closed: TestEnvironment;
  const work = new FlowWork();
  beforeAll(async () => {
    const store = await openTestStore();
    t = await startTestApp({ store: { ...store, db: store.db.withPlugin(work) } });
    closed = (await t.createProject('Invite only')).development;
    await t.setSettings(closed.id, { signUp: false });
  });
  afterAll(() => t.close());

  async function known(environment: TestEnvironment): Promise<string> {
    const user = await t.call({
      method: 'POST',
      url: '/v1/users',
      credential: environment.secretKey,
      payload: { email: uniqueEmail('member') },
    });
    expect(user.statusCode).toBe(201);
    return user.json().email;
  }

  it.each(FLOWS)('%s (sign-up closed, so nothing is sent to the unknown address)', async (flow, payload) => {
    const email = await known(closed);
    const forKnown = await work.during(async () => expect((await start(t, flow, payload(email), closed)).statusCode).toBe(202));
    const forUnknown = await work.during(async () =>
      expect((await start(t, flow, payload(uniqueEmail('stranger')), closed)).statusCode).toBe(202),
    );
    expect(forKnown).toContain(`InsertQueryNode flow_tokens`);
    expect(forKnown).toContain(`InsertQueryNode email_outbox`);
    expect(forUnknown).toEqual(forKnown);
  });

  it.each(FLOWS)('%s (sign-up open)', async (flow, payload) => {
    const email = await known(t.project.development);
    const forKnown = await work.during(() => start(t, flow, payload(email)));
    const forUnknown = await work.during(() => start(t, flow, payload(uniqueEmail('nobody'))));
    expect(forKnown.length).toBeGreaterThan(0);
    expect(forUnknown).toEqual(forKnown);
  });
});
