import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { SoftAuthenticator } from '../../server/test/helpers/webauthn.js';
import { createGatehouse, type Gatehouse } from '../src/index.js';
import { GOOD_PASSWORD, startLiveGatehouse, uniqueEmail, type LiveGatehouse } from './helpers/gatehouse.js';

/**
 * A passkey at the second step through @gatehouse/js, against a real Gatehouse over HTTP. The
 * browser's WebAuthn is played by the server tests' software authenticator behind a stand-in
 * `navigator.credentials`, so the SDK's own conversions (binary options in, toJSON() out) run.
 */
const ORIGIN = 'https://example.test';
let live: LiveGatehouse;
const clients: Gatehouse[] = [];
let authenticator: SoftAuthenticator;

const b64url = (bytes: ArrayBuffer | ArrayBufferView) =>
  Buffer.from(
    bytes instanceof ArrayBuffer ? new Uint8Array(bytes) : new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength),
  ).toString('base64url');
const buffer = (text: string) => new Uint8Array(Buffer.from(text, 'base64url')).buffer;

/** What the browser would hand back: a PublicKeyCredential-like object over the software authenticator's JSON. */
function asCredential(json: any) {
  const r = json.response;
  const response: Record<string, unknown> = { clientDataJSON: buffer(r.clientDataJSON) };
  if (r.attestationObject) Object.assign(response, { attestationObject: buffer(r.attestationObject), getTransports: () => r.transports });
  if (r.authenticatorData) {
    Object.assign(response, {
      authenticatorData: buffer(r.authenticatorData),
      signature: buffer(r.signature),
      userHandle: r.userHandle ? buffer(r.userHandle) : null,
    });
  }
  return {
    id: json.id,
    rawId: buffer(json.rawId),
    type: 'public-key',
    authenticatorAttachment: 'platform',
    getClientExtensionResults: () => ({}),
    response,
  };
}

function installWebAuthn() {
  const ids = (list?: Array<{ id: BufferSource }>) => list?.map((c) => ({ id: b64url(c.id as ArrayBufferView) }));
  const credentials = {
    async create({ publicKey }: { publicKey: any }) {
      return asCredential(
        authenticator.create({
          ...publicKey,
          challenge: b64url(publicKey.challenge),
          user: { ...publicKey.user, id: b64url(publicKey.user.id) },
        }),
      );
    },
    async get({ publicKey }: { publicKey: any }) {
      return asCredential(
        authenticator.get({ ...publicKey, challenge: b64url(publicKey.challenge), allowCredentials: ids(publicKey.allowCredentials) }),
      );
    },
  };
  Object.defineProperty(globalThis, 'navigator', { value: { credentials }, configurable: true, writable: true });
  Object.defineProperty(globalThis, 'PublicKeyCredential', {
    value: function PublicKeyCredential() {},
    configurable: true,
    writable: true,
  });
}

beforeAll(async () => {
  live = await startLiveGatehouse();
  // A page on https://example.test: the RP ID is the environment's domain (no Origin header from Node).
  await live.t.setSettings(live.t.project.development.id, { domain: 'example.test' });
  installWebAuthn();
});
afterEach(() => {
  for (const gh of clients.splice(0)) gh.destroy();
});
afterAll(() => live.close());

async function client(): Promise<Gatehouse> {
  const gh = createGatehouse({ publishableKey: live.t.project.development.publishableKey, baseUrl: live.url });
  clients.push(gh);
  await gh.load();
  return gh;
}

async function userWithPassword() {
  const email = uniqueEmail('js-passkey');
  const created = await live.t.call({
    method: 'POST',
    url: '/v1/users',
    credential: live.t.project.development.secretKey,
    payload: { email, password: GOOD_PASSWORD, emailVerified: true },
  });
  expect(created.statusCode).toBe(201);
  return email;
}

function claims(token: string) {
  return JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString('utf8')) as { amr: string[]; fva: number[] };
}

describe('@gatehouse/js: a passkey as the second factor', () => {
  it('signIn.secondFactor({factor: "passkey"}) runs the ceremony for the pending attempt and signs in', async () => {
    authenticator = new SoftAuthenticator(ORIGIN);
    const email = await userWithPassword();
    const owner = await client();
    await owner.signIn.password({ email, password: GOOD_PASSWORD });
    await owner.user.passkeys.create({ name: 'Node' });

    const gh = await client();
    const first = await gh.signIn.password({ email, password: GOOD_PASSWORD });
    expect(first).toMatchObject({ status: 'needs_second_factor', factors: ['passkey'], isSignedIn: false });
    const done = await gh.signIn.secondFactor({ factor: 'passkey' });
    expect(done).toMatchObject({ status: 'complete', isSignedIn: true, backupCodes: null });
    expect(claims((await gh.getToken())!)).toMatchObject({ amr: ['pwd', 'passkey'], fva: [0, 0] });

    // gh.reverify({passkey: true}): options from /v1/me/reverify/passkey-options, then the assertion.
    await gh.reverify({ passkey: true });
    expect(claims((await gh.getToken())!).amr).toEqual(['pwd', 'passkey']);
  });

  it('under mfa "required", secondFactor({factor: "passkey"}) on a setup attempt makes a passkey (and passkeySetup() does too)', async () => {
    await live.t.setSettings(live.t.project.development.id, { mfa: 'required' });
    try {
      for (const viaSetup of [false, true]) {
        authenticator = new SoftAuthenticator(ORIGIN);
        const email = await userWithPassword();
        const gh = await client();
        expect((await gh.signIn.password({ email, password: GOOD_PASSWORD })).status).toBe('needs_second_factor_setup');
        const done = viaSetup ? await gh.signIn.passkeySetup() : await gh.signIn.secondFactor({ factor: 'passkey' });
        expect(done).toMatchObject({ status: 'complete', isSignedIn: true, backupCodes: null });
        expect(await gh.user.passkeys.list()).toHaveLength(1);
        expect(authenticator.credentials).toHaveLength(1);
      }
    } finally {
      await live.t.setSettings(live.t.project.development.id, { mfa: 'optional' });
    }
  });
});
