import type { PasskeyResponse } from '@gatehouse/contract';
import { verifyAuthenticationResponse, verifyRegistrationResponse, type AuthenticationResponseJSON } from '@simplewebauthn/server';
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { AssertionRefused, cachedKeyCount, verifyAssertion } from '../../src/passkeys/assertion.js';
import { cbor, SoftAuthenticator, type Cbor, type PasskeyAlgorithm, type Tamper } from '../helpers/webauthn.js';

/**
 * The node:crypto assertion check (src/passkeys/assertion.ts) against @simplewebauthn/server's own,
 * on the same assertions: each forgery one of them refuses, the other refuses too, and a genuine
 * assertion passes both with the same counter and backup state.
 */
const ORIGIN = 'https://app.example.com';
const RP_ID = 'example.com';

async function enrolled(alg: PasskeyAlgorithm, counting = true) {
  const authenticator = new SoftAuthenticator(ORIGIN, alg, counting);
  const challenge = randomBytes(32).toString('base64url');
  const created = authenticator.create({ rp: { id: RP_ID }, user: { id: randomBytes(32).toString('base64url') }, challenge });
  const registration = await verifyRegistrationResponse({
    response: created as never,
    expectedChallenge: challenge,
    expectedOrigin: ORIGIN,
    expectedRPID: RP_ID,
    supportedAlgorithmIDs: [-7, -8, -257],
  });
  expect(registration.verified).toBe(true);
  const publicKey = Buffer.from(registration.registrationInfo!.credential.publicKey).toString('base64url');
  return { authenticator, publicKey };
}

type Outcome = { accepted: true; counter: number; backedUp: boolean } | { accepted: false };

function ours(response: PasskeyResponse, challenge: string, publicKey: string, counter: number): Outcome {
  try {
    const verified = verifyAssertion({
      response,
      expectedChallenge: challenge,
      expectedOrigin: ORIGIN,
      expectedRpId: RP_ID,
      credential: { publicKey, counter },
    });
    return { accepted: true, counter: verified.newCounter, backedUp: verified.backedUp };
  } catch (error) {
    expect(error).toBeInstanceOf(AssertionRefused);
    return { accepted: false };
  }
}

async function theirs(response: PasskeyResponse, challenge: string, publicKey: string, counter: number): Promise<Outcome> {
  try {
    const result = await verifyAuthenticationResponse({
      response: response as unknown as AuthenticationResponseJSON,
      expectedChallenge: challenge,
      expectedOrigin: ORIGIN,
      expectedRPID: RP_ID,
      expectedType: 'webauthn.get',
      requireUserVerification: true,
      credential: { id: response.id, publicKey: Buffer.from(publicKey, 'base64url'), counter },
    });
    if (!result.verified || !result.authenticationInfo.userVerified) return { accepted: false };
    return { accepted: true, counter: result.authenticationInfo.newCounter, backedUp: result.authenticationInfo.credentialBackedUp };
  } catch {
    return { accepted: false };
  }
}

const forgeries: Record<string, { tamper?: Tamper; storedCounter?: number; bend?: (response: any) => void }> = {
  'a replayed challenge (another one signed)': { tamper: { challenge: randomBytes(32).toString('base64url') } },
  'a foreign origin': { tamper: { origin: 'https://evil.example.net' } },
  'a wrong RP ID': { tamper: { rpId: 'evil.example.net' } },
  'a webauthn.create response used to sign in': { tamper: { type: 'webauthn.create' } },
  'user presence missing': { tamper: { up: false } },
  'user verification missing': { tamper: { uv: false } },
  'a cloned counter (equal to the stored one)': { tamper: { counter: 7 }, storedCounter: 7 },
  'a counter going back': { tamper: { counter: 3 }, storedCounter: 7 },
  'a zero counter where one was started': { tamper: { counter: 0 }, storedCounter: 7 },
  'backed up without being eligible': { tamper: { bs: true } },
  'a flipped signature bit': {
    bend: (response) => {
      const signature = Buffer.from(response.response.signature, 'base64url');
      signature[signature.length - 3]! ^= 0x01;
      response.response.signature = signature.toString('base64url');
    },
  },
  'authenticatorData changed after signing (the counter raised)': {
    bend: (response) => {
      const data = Buffer.from(response.response.authenticatorData, 'base64url');
      data[36] = (data[36]! + 1) & 0xff;
      response.response.authenticatorData = data.toString('base64url');
    },
  },
  'clientDataJSON changed after signing': {
    bend: (response) => {
      const client = JSON.parse(Buffer.from(response.response.clientDataJSON, 'base64url').toString());
      response.response.clientDataJSON = Buffer.from(JSON.stringify({ ...client, crossOrigin: true })).toString('base64url');
    },
  },
  'an id that is not the raw id': { bend: (response) => (response.id = `${response.id}A`) },
  'an empty signature': { bend: (response) => (response.response.signature = '') },
  'a truncated authenticatorData': {
    bend: (response) =>
      (response.response.authenticatorData = Buffer.from(response.response.authenticatorData, 'base64url')
        .subarray(0, 30)
        .toString('base64url')),
  },
  'trailing bytes after authenticatorData': {
    bend: (response) =>
      (response.response.authenticatorData = Buffer.concat([
        Buffer.from(response.response.authenticatorData, 'base64url'),
        Buffer.from([0]),
      ]).toString('base64url')),
  },
};

describe.each(['ES256', 'EdDSA', 'RS256'] as const)('passkey assertion (%s): node:crypto and @simplewebauthn/server agree', (alg) => {
  it('accepts a genuine assertion, with the same counter and backup state', async () => {
    const { authenticator, publicKey } = await enrolled(alg);
    for (const tamper of [{}, { be: true }, { be: true, bs: true }] as Tamper[]) {
      const challenge = randomBytes(32).toString('base64url');
      const response = authenticator.get({ rpId: RP_ID, challenge }, tamper) as unknown as PasskeyResponse;
      const mine = ours(response, challenge, publicKey, 0);
      expect(mine.accepted).toBe(true);
      expect(mine).toEqual(await theirs(response, challenge, publicKey, 0));
    }
  });

  it('accepts a synced passkey (counter 0 on both sides)', async () => {
    const { authenticator, publicKey } = await enrolled(alg, false);
    const challenge = randomBytes(32).toString('base64url');
    const response = authenticator.get({ rpId: RP_ID, challenge }) as unknown as PasskeyResponse;
    expect(ours(response, challenge, publicKey, 0)).toEqual({ accepted: true, counter: 0, backedUp: false });
  });

  it.each(Object.entries(forgeries))('refuses %s, as simplewebauthn does', async (_, forgery) => {
    const { authenticator, publicKey } = await enrolled(alg);
    const challenge = randomBytes(32).toString('base64url');
    const response = authenticator.get({ rpId: RP_ID, challenge }, forgery.tamper ?? {}) as any;
    forgery.bend?.(response);
    const stored = forgery.storedCounter ?? 0;
    expect(await theirs(response, challenge, publicKey, stored)).toEqual({ accepted: false });
    expect(ours(response, challenge, publicKey, stored)).toEqual({ accepted: false });
  });

  it('refuses an assertion signed by another credential', async () => {
    const { authenticator } = await enrolled(alg);
    const other = await enrolled(alg);
    const challenge = randomBytes(32).toString('base64url');
    const response = authenticator.get({ rpId: RP_ID, challenge }) as unknown as PasskeyResponse;
    expect(ours(response, challenge, other.publicKey, 0)).toEqual({ accepted: false });
    expect(await theirs(response, challenge, other.publicKey, 0)).toEqual({ accepted: false });
  });
});

const coseOf = (entries: [number, Cbor][]) => cbor(new Map<Cbor, Cbor>(entries));

describe('passkey assertion: stored keys it cannot use', () => {
  it.each([
    [
      'an unsupported algorithm (ES384)',
      coseOf([
        [1, 2],
        [3, -35],
        [-1, 2],
        [-2, randomBytes(48)],
        [-3, randomBytes(48)],
      ]),
    ],
    [
      'an EC2 key on another curve than P-256 for ES256',
      coseOf([
        [1, 2],
        [3, -7],
        [-1, 2],
        [-2, randomBytes(48)],
        [-3, randomBytes(48)],
      ]),
    ],
    [
      'a key with no coordinates',
      coseOf([
        [1, 2],
        [3, -7],
        [-1, 1],
      ]),
    ],
    [
      'a point not on the curve',
      coseOf([
        [1, 2],
        [3, -7],
        [-1, 1],
        [-2, randomBytes(32)],
        [-3, randomBytes(32)],
      ]),
    ],
    ['bytes that are not CBOR', Buffer.from([0xff, 0x00, 0x13])],
    // A key type with another type's algorithm: each type verifies its one algorithm only.
    [
      'an EC2 key claiming RS256',
      coseOf([
        [1, 2],
        [3, -257],
        [-1, 1],
        [-2, randomBytes(32)],
        [-3, randomBytes(32)],
      ]),
    ],
    [
      'an OKP key claiming ES256',
      coseOf([
        [1, 1],
        [3, -7],
        [-1, 6],
        [-2, randomBytes(32)],
      ]),
    ],
    [
      'an RSA key claiming PS256',
      coseOf([
        [1, 3],
        [3, -37],
        [-1, randomBytes(256)],
        [-2, Buffer.from([1, 0, 1])],
      ]),
    ],
    [
      'an RSA key with a 2048-bit exponent',
      coseOf([
        [1, 3],
        [3, -257],
        [-1, randomBytes(256)],
        [-2, randomBytes(256)],
      ]),
    ],
    [
      'an RSA key of 1024 bits',
      coseOf([
        [1, 3],
        [3, -257],
        [-1, randomBytes(128)],
        [-2, Buffer.from([1, 0, 1])],
      ]),
    ],
    [
      'an OKP key on X25519 (crv 4)',
      coseOf([
        [1, 1],
        [3, -8],
        [-1, 4],
        [-2, randomBytes(32)],
      ]),
    ],
  ])('refuses an assertion against %s, without throwing anything else', async (_, cose) => {
    const { authenticator } = await enrolled('ES256');
    const challenge = randomBytes(32).toString('base64url');
    const response = authenticator.get({ rpId: RP_ID, challenge }) as unknown as PasskeyResponse;
    expect(ours(response, challenge, cose.toString('base64url'), 0)).toEqual({ accepted: false });
  });
});

describe('passkey assertion: what else it refuses, and what it keeps', () => {
  it('refuses a token binding with an unknown status (the client data signed as it is)', async () => {
    const { authenticator, publicKey } = await enrolled('ES256');
    const challenge = randomBytes(32).toString('base64url');
    const genuine = authenticator.get({ rpId: RP_ID, challenge }) as any;
    const client = JSON.parse(Buffer.from(genuine.response.clientDataJSON, 'base64url').toString());
    // Re-signed by the authenticator's own key, so only the token binding is wrong.
    const bent = authenticator.get(
      { rpId: RP_ID, challenge },
      { clientData: { ...client, tokenBinding: { status: 'stolen' } } },
    ) as PasskeyResponse;
    expect(ours(bent, challenge, publicKey, 0)).toEqual({ accepted: false });
    expect(await theirs(bent, challenge, publicKey, 0)).toEqual({ accepted: false });
  });

  it('keeps a credential key only once it has verified a signature', async () => {
    const { authenticator, publicKey } = await enrolled('ES256');
    const before = cachedKeyCount();
    const challenge = randomBytes(32).toString('base64url');
    const forged = authenticator.get({ rpId: RP_ID, challenge }) as any;
    forged.response.signature = Buffer.from(forged.response.signature, 'base64url').reverse().toString('base64url');
    expect(ours(forged, challenge, publicKey, 0)).toEqual({ accepted: false });
    expect(cachedKeyCount()).toBe(before);
    const genuine = authenticator.get({ rpId: RP_ID, challenge }) as unknown as PasskeyResponse;
    expect(ours(genuine, challenge, publicKey, 0).accepted).toBe(true);
    expect(cachedKeyCount()).toBe(before + 1);
  });
});
