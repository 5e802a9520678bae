import {
  createCipheriv,
  createDecipheriv,
  createPrivateKey,
  createPublicKey,
  generateKeyPair,
  randomBytes,
  type JsonWebKey,
  type KeyObject,
} from 'node:crypto';
import { promisify } from 'node:util';
import { isUniqueViolation, type Store } from '../db/index.js';
import { newId } from '../lib/crypto.js';
import { deriveSubkey } from '../lib/cursor.js';
import { ACCESS_TOKEN_TTL, type Environment, type TokenAlgorithm } from '../tenancy/settings.js';
import * as q from './queries.js';

const generateKeyPairAsync = promisify(generateKeyPair);

/** Key ids: `key_` + 26 lowercase Crockford base32 characters (what newId makes). */
export const KID_PATTERN = /^key_[0-9a-z]{26}$/;

/** Allowed skew between this service's clock and a verifier's, in ms. */
export const CLOCK_SKEW_MS = 5_000;

/**
 * How long a retired key stays published: every token it signed expires within the longest access
 * token lifetime an environment can configure, plus the skew a verifier may allow.
 */
export const RETIRED_KEY_PUBLISH_MS = ACCESS_TOKEN_TTL.max * 1000 + CLOCK_SKEW_MS;

/** How long a node trusts its cached current key before re-reading it (rotation by another node). */
const CURRENT_KEY_RECHECK_MS = 30_000;

export interface SigningKey {
  kid: string;
  alg: TokenAlgorithm;
  privateKey: KeyObject;
  /** The encoded JWT header for this key, computed once. */
  encodedHeader: string;
}

export interface VerificationKey {
  kid: string;
  alg: TokenAlgorithm;
  publicKey: KeyObject;
}

export interface PublicJwk {
  kid: string;
  alg: TokenAlgorithm;
  use: 'sig';
  kty: string;
  [member: string]: unknown;
}

export interface SigningKeyView {
  kid: string;
  algorithm: TokenAlgorithm;
  createdAt: number;
  retiredAt: number | null;
  publishUntil: number | null;
}

async function generate(alg: TokenAlgorithm): Promise<{ publicKey: KeyObject; privateKey: KeyObject }> {
  switch (alg) {
    case 'RS256':
      return generateKeyPairAsync('rsa', { modulusLength: 2048, publicExponent: 0x10001 });
    case 'ES256':
      return generateKeyPairAsync('ec', { namedCurve: 'P-256' });
    case 'EdDSA':
      return generateKeyPairAsync('ed25519');
  }
}

function encodedHeader(alg: TokenAlgorithm, kid: string): string {
  return Buffer.from(JSON.stringify({ alg, kid, typ: 'at+jwt' })).toString('base64url');
}

/**
 * Per-environment signing keys: created on demand, private halves encrypted at rest with
 * AES-256-GCM under a key derived from GATEHOUSE_SECRET (bound to the environment and kid as
 * associated data), and cached in memory as KeyObjects so signing and verifying never parse a key
 * on the hot path.
 */
export class SigningKeys {
  private readonly encryptionKey: Buffer;
  private readonly current = new Map<string, { key: SigningKey; checkedAt: number }>();
  private readonly verification = new Map<string, VerificationKey>();
  private readonly creating = new Map<string, Promise<SigningKey>>();

  constructor(
    private readonly store: Store,
    instanceSecret: string,
    private readonly now: () => number,
  ) {
    this.encryptionKey = deriveSubkey(instanceSecret, 'signing-keys');
  }

  private encrypt(environmentId: string, kid: string, plaintext: Buffer): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.encryptionKey, iv);
    cipher.setAAD(Buffer.from(`${environmentId}/${kid}`));
    const ciphertext = Buffer.concat([cipher.update(plaintext), cipher.final()]);
    return ['v1', iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), ciphertext.toString('base64url')].join('.');
  }

  private decrypt(environmentId: string, kid: string, sealed: string): Buffer {
    const [version, iv, tag, ciphertext] = sealed.split('.');
    if (version !== 'v1' || !iv || !tag || !ciphertext) throw new Error(`Signing key ${kid} has an unknown storage format`);
    const decipher = createDecipheriv('aes-256-gcm', this.encryptionKey, Buffer.from(iv, 'base64url'));
    decipher.setAAD(Buffer.from(`${environmentId}/${kid}`));
    decipher.setAuthTag(Buffer.from(tag, 'base64url'));
    return Buffer.concat([decipher.update(Buffer.from(ciphertext, 'base64url')), decipher.final()]);
  }

  private toSigningKey(row: { environment_id: string; id: string; algorithm: string; private_key: string }): SigningKey {
    const alg = row.algorithm as TokenAlgorithm;
    const privateKey = createPrivateKey({ key: this.decrypt(row.environment_id, row.id, row.private_key), format: 'der', type: 'pkcs8' });
    return { kid: row.id, alg, privateKey, encodedHeader: encodedHeader(alg, row.id) };
  }

  /** The key new tokens of this environment are signed with, created when there is none yet. */
  async signingKey(environment: Environment): Promise<SigningKey> {
    const cached = this.current.get(environment.id);
    const now = this.now();
    if (cached && cached.key.alg === environment.settings.tokenAlgorithm && now - cached.checkedAt < CURRENT_KEY_RECHECK_MS) {
      return cached.key;
    }
    const pending = this.creating.get(environment.id);
    if (pending) return pending;
    const loading = this.loadOrCreate(environment.id, environment.settings.tokenAlgorithm, false).finally(() =>
      this.creating.delete(environment.id),
    );
    this.creating.set(environment.id, loading);
    return loading;
  }

  /** Replaces the current key with a new one; the old one stays published until its tokens expire. */
  async rotate(environment: Environment): Promise<SigningKey> {
    return this.loadOrCreate(environment.id, environment.settings.tokenAlgorithm, true);
  }

  private async loadOrCreate(environmentId: string, alg: TokenAlgorithm, forceNew: boolean): Promise<SigningKey> {
    for (let attempt = 0; attempt < 3; attempt++) {
      const row = await q.findCurrentSigningKey(this.store.db, environmentId);
      if (row && row.algorithm === alg && !forceNew) {
        const cached = this.current.get(environmentId)?.key;
        const key = cached?.kid === row.id ? cached : this.toSigningKey(row);
        this.current.set(environmentId, { key, checkedAt: this.now() });
        return key;
      }
      const { publicKey, privateKey } = await generate(alg);
      const kid = newId('key', environmentId);
      const now = this.now();
      const jwk = { ...publicKey.export({ format: 'jwk' }), kid, alg, use: 'sig' };
      try {
        await this.store.db.transaction().execute(async (tx) => {
          await q.retireCurrentSigningKey(tx, environmentId, now, now + RETIRED_KEY_PUBLISH_MS);
          await q.insertSigningKey(tx, environmentId, {
            id: kid,
            algorithm: alg,
            public_jwk: JSON.stringify(jwk),
            private_key: this.encrypt(environmentId, kid, privateKey.export({ format: 'der', type: 'pkcs8' })),
            created_at: now,
            retired_at: null,
            publish_until: null,
          });
        });
      } catch (error) {
        // Another node made a current key at the same moment: use theirs.
        if (isUniqueViolation(error)) {
          forceNew = false;
          continue;
        }
        throw error;
      }
      const key: SigningKey = { kid, alg, privateKey, encodedHeader: encodedHeader(alg, kid) };
      this.current.set(environmentId, { key, checkedAt: now });
      this.verification.set(`${environmentId}/${kid}`, { kid, alg, publicKey });
      return key;
    }
    throw new Error(`Could not settle on a signing key for environment ${environmentId}`);
  }

  /**
   * The public key `kid` of this environment, or undefined. Public keys never change, so they are
   * cached for good; a key of another environment is never found, because the look-up is scoped.
   */
  async verificationKey(environmentId: string, kid: string): Promise<VerificationKey | undefined> {
    const cacheKey = `${environmentId}/${kid}`;
    const cached = this.verification.get(cacheKey);
    if (cached) return cached;
    const row = await q.findSigningKey(this.store.db, environmentId, kid);
    if (!row) return undefined;
    const key: VerificationKey = {
      kid: row.id,
      alg: row.algorithm as TokenAlgorithm,
      publicKey: createPublicKey({ key: JSON.parse(row.public_jwk) as JsonWebKey, format: 'jwk' }),
    };
    this.verification.set(cacheKey, key);
    return key;
  }

  /** The published keys: the current one (created if needed) and retired ones still in their window. */
  async jwks(environment: Environment): Promise<{ keys: PublicJwk[] }> {
    await this.signingKey(environment);
    const rows = await q.listPublishedSigningKeys(this.store.db, environment.id, this.now());
    return { keys: rows.map((row) => JSON.parse(row.public_jwk) as PublicJwk) };
  }

  async list(environment: Environment): Promise<SigningKeyView[]> {
    const rows = await q.listPublishedSigningKeys(this.store.db, environment.id, this.now());
    return rows.map((row) => ({
      kid: row.id,
      algorithm: row.algorithm as TokenAlgorithm,
      createdAt: row.created_at,
      retiredAt: row.retired_at,
      publishUntil: row.publish_until,
    }));
  }
}
