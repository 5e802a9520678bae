import { createHash, generateKeyPairSync, randomBytes, sign, type KeyObject } from 'node:crypto';

/**
 * A software WebAuthn authenticator (tests only): what a platform authenticator and the browser
 * together answer to navigator.credentials.create() and .get(), built with node:crypto and a
 * small CBOR encoder. Every field an attack needs to bend can be bent through `tamper`.
 */

// ---- CBOR (RFC 8949), just what attestation objects and COSE keys use

export type Cbor = number | string | Uint8Array | Cbor[] | Map<Cbor, Cbor> | { [key: string]: Cbor };

function head(major: number, n: number): Buffer {
  if (n < 24) return Buffer.from([(major << 5) | n]);
  if (n < 0x100) return Buffer.from([(major << 5) | 24, n]);
  if (n < 0x10000) return Buffer.from([(major << 5) | 25, n >> 8, n & 0xff]);
  const b = Buffer.alloc(5);
  b[0] = (major << 5) | 26;
  b.writeUInt32BE(n, 1);
  return b;
}

export function cbor(value: Cbor): Buffer {
  if (typeof value === 'number') return value >= 0 ? head(0, value) : head(1, -1 - value);
  if (typeof value === 'string') {
    const bytes = Buffer.from(value, 'utf8');
    return Buffer.concat([head(3, bytes.length), bytes]);
  }
  if (value instanceof Uint8Array) return Buffer.concat([head(2, value.length), Buffer.from(value)]);
  if (Array.isArray(value)) return Buffer.concat([head(4, value.length), ...value.map(cbor)]);
  const entries = value instanceof Map ? [...value.entries()] : Object.entries(value);
  return Buffer.concat([head(5, entries.length), ...entries.flatMap(([k, v]) => [cbor(k), cbor(v)])]);
}

// ---- keys

export type PasskeyAlgorithm = 'ES256' | 'EdDSA' | 'RS256';

function coseKey(alg: PasskeyAlgorithm, publicKey: KeyObject, pad = 0): Buffer {
  if (pad > 0) {
    const plain = coseKey(alg, publicKey);
    // One more map entry (label -70000, bytes): the same key, longer. The map's head counts entries.
    const entries = plain[0]! & 0x1f;
    return Buffer.concat([Buffer.from([0xa0 | (entries + 1)]), plain.subarray(1), cbor(-70000), cbor(Buffer.alloc(pad))]);
  }
  if (alg === 'RS256') {
    const rsa = publicKey.export({ format: 'jwk' }) as { n: string; e: string };
    return cbor(
      new Map<Cbor, Cbor>([
        [1, 3],
        [3, -257],
        [-1, Buffer.from(rsa.n, 'base64url')],
        [-2, Buffer.from(rsa.e, 'base64url')],
      ]),
    );
  }
  const jwk = publicKey.export({ format: 'jwk' }) as { x: string; y?: string };
  const x = Buffer.from(jwk.x, 'base64url');
  if (alg === 'ES256') {
    const y = Buffer.from(jwk.y!, 'base64url');
    return cbor(
      new Map<Cbor, Cbor>([
        [1, 2],
        [3, -7],
        [-1, 1],
        [-2, x],
        [-3, y],
      ]),
    );
  }
  return cbor(
    new Map<Cbor, Cbor>([
      [1, 1],
      [3, -8],
      [-1, 6],
      [-2, x],
    ]),
  );
}

const FLAG_UP = 0x01;
const FLAG_UV = 0x04;
const FLAG_BE = 0x08;
const FLAG_BS = 0x10;
const FLAG_AT = 0x40;

export interface SoftCredential {
  id: Buffer;
  alg: PasskeyAlgorithm;
  privateKey: KeyObject;
  publicKey: KeyObject;
  rpId: string;
  userHandle: string;
  counter: number;
}

/** What a test may bend in one ceremony. */
export interface Tamper {
  origin?: string;
  /** The RP ID hashed into authenticatorData (default: the options' RP ID). */
  rpId?: string;
  /** clientDataJSON.type */
  type?: string;
  challenge?: string;
  up?: boolean;
  uv?: boolean;
  /** Backup eligibility and state flags (default: neither). */
  be?: boolean;
  bs?: boolean;
  /** The counter to report (default: the credential's, plus one when counting). */
  counter?: number;
  userHandle?: string | null;
  /** Use this credential id instead of a new one (create) or the stored one (get). */
  credentialId?: Buffer;
  /** get: the client data to sign, as an object (default: type, challenge, origin, crossOrigin). */
  clientData?: Record<string, unknown>;
  /** create, RS256: the key's public exponent (default 65537) and modulus size (default 2048). */
  rsa?: { exponent?: number; bits?: number };
  /** create: pad the COSE public key with an extra parameter of this many bytes. */
  padPublicKey?: number;
}

function keyPair(alg: PasskeyAlgorithm, rsa: Tamper['rsa'] = {}) {
  if (alg === 'ES256') return generateKeyPairSync('ec', { namedCurve: 'P-256' });
  if (alg === 'RS256') return generateKeyPairSync('rsa', { modulusLength: rsa.bits ?? 2048, publicExponent: rsa.exponent ?? 65537 });
  return generateKeyPairSync('ed25519');
}

function authData(rpId: string, flags: number, counter: number, attested?: Buffer): Buffer {
  const count = Buffer.alloc(4);
  count.writeUInt32BE(counter >>> 0);
  return Buffer.concat([createHash('sha256').update(rpId).digest(), Buffer.from([flags]), count, ...(attested ? [attested] : [])]);
}

function clientData(type: string, challenge: string, origin: string): Buffer {
  return Buffer.from(JSON.stringify({ type, challenge, origin, crossOrigin: false }));
}

export class SoftAuthenticator {
  readonly credentials: SoftCredential[] = [];

  /**
   * @param counting whether the authenticator keeps a signature counter (synced passkeys report 0)
   */
  constructor(
    readonly origin: string,
    readonly alg: PasskeyAlgorithm = 'ES256',
    readonly counting = true,
  ) {}

  /** navigator.credentials.create({publicKey: options}) → PublicKeyCredential.toJSON() */
  create(options: any, tamper: Tamper = {}) {
    const rpId: string = options.rp.id;
    const { privateKey, publicKey } = keyPair(this.alg, tamper.rsa);
    const id = tamper.credentialId ?? randomBytes(32);
    const counter = tamper.counter ?? 0;
    const credential: SoftCredential = { id, alg: this.alg, privateKey, publicKey, rpId, userHandle: options.user.id, counter };
    this.credentials.push(credential);
    const idLength = Buffer.alloc(2);
    idLength.writeUInt16BE(id.length);
    const attested = Buffer.concat([Buffer.alloc(16), idLength, id, coseKey(this.alg, publicKey, tamper.padPublicKey)]);
    const flags = (tamper.up === false ? 0 : FLAG_UP) | (tamper.uv === false ? 0 : FLAG_UV) | FLAG_AT;
    const data = authData(tamper.rpId ?? rpId, flags, counter, attested);
    const attestationObject = cbor({ fmt: 'none', attStmt: {}, authData: data });
    const client = clientData(tamper.type ?? 'webauthn.create', tamper.challenge ?? options.challenge, tamper.origin ?? this.origin);
    return {
      id: id.toString('base64url'),
      rawId: id.toString('base64url'),
      type: 'public-key',
      authenticatorAttachment: 'platform',
      clientExtensionResults: {},
      response: {
        clientDataJSON: client.toString('base64url'),
        attestationObject: attestationObject.toString('base64url'),
        transports: ['internal'],
      },
    };
  }

  /** navigator.credentials.get({publicKey: options}) → PublicKeyCredential.toJSON(); the first credential for the RP ID (or allowed). */
  get(options: any, tamper: Tamper = {}, which?: SoftCredential) {
    const allowed: string[] = (options.allowCredentials ?? []).map((c: { id: string }) => c.id);
    const credential =
      which ??
      this.credentials.find((c) => c.rpId === options.rpId && (allowed.length === 0 || allowed.includes(c.id.toString('base64url'))));
    if (!credential) throw new Error('no credential for this RP ID');
    if (tamper.counter === undefined && this.counting) credential.counter += 1;
    const counter = tamper.counter ?? credential.counter;
    const flags =
      (tamper.up === false ? 0 : FLAG_UP) | (tamper.uv === false ? 0 : FLAG_UV) | (tamper.be ? FLAG_BE : 0) | (tamper.bs ? FLAG_BS : 0);
    const data = authData(tamper.rpId ?? options.rpId, flags, counter);
    const client = tamper.clientData
      ? Buffer.from(JSON.stringify(tamper.clientData))
      : clientData(tamper.type ?? 'webauthn.get', tamper.challenge ?? options.challenge, tamper.origin ?? this.origin);
    const signed = Buffer.concat([data, createHash('sha256').update(client).digest()]);
    const signature =
      credential.alg === 'ES256'
        ? sign('sha256', signed, { key: credential.privateKey, dsaEncoding: 'der' })
        : sign(credential.alg === 'RS256' ? 'sha256' : null, signed, credential.privateKey);
    const id = tamper.credentialId ?? credential.id;
    return {
      id: id.toString('base64url'),
      rawId: id.toString('base64url'),
      type: 'public-key',
      authenticatorAttachment: 'platform',
      clientExtensionResults: {},
      response: {
        clientDataJSON: client.toString('base64url'),
        authenticatorData: data.toString('base64url'),
        signature: signature.toString('base64url'),
        userHandle: tamper.userHandle === undefined ? credential.userHandle : tamper.userHandle,
      },
    };
  }
}
