import { changeFeed } from '../db/changes.js';
import type { EnvironmentId } from '../lib/ids.js';
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
import { newId } from '../lib/crypto.js';
import { deriveSubkey } from '../lib/cursor.js';
import type { Selectable } from 'kysely';
import { isUniqueViolation, type Store } from '../db/index.js';
import type { SigningKeysTable } from '../db/schema.js';
import type { Environment, TokenAlgorithm } from '../tenancy/settings.js';
import {
  KEY_ACTIVATION_DELAY_MS,
  keyState,
  planRotation,
  RETIRED_KEY_PUBLISH_MS,
  splitLive,
  type RotationIntent,
  type SigningKeyState,
} from './key-schedule.js';
import * as q from './signing-key-queries.js';

const generateKeyPairAsync = promisify(generateKeyPair);

/** Key ids: `key_` + 26 lowercase Crockford base32 characters (what newId makes). */
export const KID_PATTERN = /^key_[0-9a-z]{26}$/;

/**
 * How long a node trusts its cached view of an environment's keys before re-reading it (a rotation
 * made on another node), and never past a scheduled activation. A staged rotation activates long
 * after this, so every node learns of it in time and switches at the stored instant.
 */
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
  state: SigningKeyState;
  createdAt: number;
  /** From when the key signs (in the future while pending). */
  activatesAt: number;
  /** When the key stops (or stopped) signing; null while no successor is scheduled. */
  retiredAt: number | null;
  /** A retired key, or the active key once a successor is scheduled, is published until then. */
  publishUntil: number | null;
}

export interface Rotation {
  key: SigningKeyView;
  /** False when a staged rotation was already pending and is returned unchanged. */
  created: boolean;
}

type KeyRow = Selectable<SigningKeysTable>;

/** Another node changed the schedule between our read and our write: read again and retry. */
class ScheduleChanged extends Error {}

function toView(row: Omit<KeyRow, 'environment_id' | 'private_key' | 'public_jwk' | 'revoked_at'>, now: number): SigningKeyView {
  return {
    kid: row.id,
    algorithm: row.algorithm as TokenAlgorithm,
    state: keyState(row, now),
    createdAt: row.created_at,
    activatesAt: row.activates_at,
    retiredAt: row.retired_at,
    publishUntil: row.publish_until,
  };
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
 * on the hot path. Rotations are staged (see key-schedule.ts).
 */
export class SigningKeys {
  private readonly encryptionKey: Buffer;
  /** Per environment: the key signing now, for which algorithm setting, until when to trust it. */
  private readonly current = new Map<string, { key: SigningKey; forAlgorithm: TokenAlgorithm; validUntil: number }>();
  /** Decrypted private keys by `environmentId/kid`, so a re-read does not decrypt again. */
  private readonly signers = new Map<string, SigningKey>();
  private readonly verification = new Map<string, VerificationKey>();
  private readonly loading = new Map<string, Promise<SigningKey>>();

  constructor(
    private readonly store: Store,
    instanceSecret: string,
    private readonly now: () => number,
  ) {
    this.encryptionKey = deriveSubkey(instanceSecret, 'signing-keys');
  }

  private encrypt(environmentId: EnvironmentId, kid: string, plaintext: Buffer): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.encryptionKey, iv);
    cipher.setAAD(Buffer.from(`${environmentId}/${kid}`));
    const ciphertext = Buffer.concat([cipher.update(plaintext), cipher.final()]);
    return ['v1', iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), ciphertext.toString('base64url')].join('.');
  }

  private decrypt(environmentId: EnvironmentId, kid: string, sealed: string): Buffer {
    const [version, iv, tag, ciphertext] = sealed.split('.');
    if (version !== 'v1' || !iv || !tag || !ciphertext) throw new Error(`Signing key ${kid} has an unknown storage format`);
    const decipher = createDecipheriv('aes-256-gcm', this.encryptionKey, Buffer.from(iv, 'base64url'));
    decipher.setAAD(Buffer.from(`${environmentId}/${kid}`));
    decipher.setAuthTag(Buffer.from(tag, 'base64url'));
    return Buffer.concat([decipher.update(Buffer.from(ciphertext, 'base64url')), decipher.final()]);
  }

  private signerOf(row: KeyRow): SigningKey {
    const cacheKey = `${row.environment_id}/${row.id}`;
    const known = this.signers.get(cacheKey);
    if (known) return known;
    const alg = row.algorithm as TokenAlgorithm;
    const privateKey = createPrivateKey({ key: this.decrypt(row.environment_id, row.id, row.private_key), format: 'der', type: 'pkcs8' });
    const key: SigningKey = { kid: row.id, alg, privateKey, encodedHeader: encodedHeader(alg, row.id) };
    this.signers.set(cacheKey, key);
    return key;
  }

  /**
   * The key new tokens of this environment are signed with now: created when there is none yet.
   * A change of `tokenAlgorithm` is staged like a rotation: the current key signs until the new
   * algorithm's key activates.
   */
  async signingKey(environment: Environment): Promise<SigningKey> {
    const cached = this.current.get(environment.id);
    if (cached && cached.forAlgorithm === environment.settings.tokenAlgorithm && this.now() < cached.validUntil) {
      return cached.key;
    }
    const pending = this.loading.get(environment.id);
    if (pending) return pending;
    const loading = this.settle(environment, 'use')
      .then((settled) => settled.signer)
      .finally(() => this.loading.delete(environment.id));
    this.loading.set(environment.id, loading);
    return loading;
  }

  /**
   * Drops this node's view of the environment's keys, so the next token reads it anew: which key
   * signs (a rotation elsewhere) and which keys verify (a revocation elsewhere).
   */
  forget(environmentId: string): void {
    this.current.delete(environmentId);
    const prefix = `${environmentId}/`;
    for (const cacheKey of this.verification.keys()) if (cacheKey.startsWith(prefix)) this.verification.delete(cacheKey);
    for (const cacheKey of this.signers.keys()) if (cacheKey.startsWith(prefix)) this.signers.delete(cacheKey);
  }

  /** Whether this node still holds `kid` as a verification key: false once a revocation was heard. */
  holdsVerificationKey(environmentId: EnvironmentId, kid: string): boolean {
    return this.verification.has(`${environmentId}/${kid}`);
  }

  /**
   * Withdraws a (compromised) key: it leaves the JWKS at once and its tokens are refused. A key
   * signing now is first replaced by one that signs at once (the emergency rotation); a pending key
   * is dropped, and the active key goes on signing. Idempotent; undefined for an unknown kid.
   */
  async revoke(environment: Environment, kid: string): Promise<SigningKeyView | undefined> {
    const environmentId = environment.id;
    const row = await q.findSigningKey(this.store.db, environmentId, kid);
    if (!row) return undefined;
    if (row.revoked_at === null) {
      if (keyState(row, this.now()) === 'active') await this.settle(environment, 'rotate-now');
      await this.store.db.transaction().execute(async (tx) => {
        const now = this.now();
        const live = splitLive(await q.listLiveSigningKeys(tx, environmentId, now), now);
        const retiredAt = row.retired_at !== null && row.retired_at <= now ? row.retired_at : now;
        await q.revokeSigningKey(tx, environmentId, kid, { now, retiredAt });
        // The active key was to retire when this pending one activated: it signs on instead.
        if (live.pending?.id === kid && live.active) {
          await q.setSigningKeyRetirement(tx, environmentId, live.active.id, live.active.retired_at, {
            retired_at: null,
            publish_until: null,
          });
        }
      });
      // Every node (this one at once) drops its keys of the environment and reads them anew.
      this.forget(environmentId);
      changeFeed(this.store.db).publish({ kind: 'environment', environmentId });
    }
    const revoked = (await q.findSigningKey(this.store.db, environmentId, kid))!;
    return toView(revoked, this.now());
  }

  /**
   * Rotates the signing key. Staged (the default): the new key is published now and signs from
   * `activatesAt`, KEY_ACTIVATION_DELAY_MS later; while one is pending, another staged rotation
   * returns it unchanged. Immediate: the new key signs at once, for emergencies (verifiers holding
   * a JWKS without it refuse its tokens until they fetch again). Either way the previous key stays
   * published until every token it signed has expired.
   */
  async rotate(environment: Environment, options: { immediate?: boolean } = {}): Promise<Rotation> {
    const settled = await this.settle(environment, options.immediate ? 'rotate-now' : 'rotate');
    // Other nodes drop their cached signing key when they hear this (forget below), so an emergency
    // rotation stops the old key signing everywhere as soon as the change arrives, not after the recheck.
    if (settled.created) changeFeed(this.store.db).publish({ kind: 'environment', environmentId: environment.id });
    const key = settled.created ?? settled.pending ?? settled.active;
    return { key: toView(key, settled.at), created: settled.created !== undefined };
  }

  /**
   * Reads the environment's live keys, applies what `intent` asks for, and refreshes this node's
   * cache. Writes are compare-and-set on the rows read, and at most one key without `retired_at`
   * may exist (a partial unique index), so nodes racing to change the schedule settle on one.
   */
  private async settle(
    environment: Environment,
    intent: RotationIntent,
  ): Promise<{ at: number; signer: SigningKey; active: KeyRow; pending?: KeyRow; created?: KeyRow }> {
    const environmentId = environment.id;
    const algorithm = environment.settings.tokenAlgorithm;
    let material: Awaited<ReturnType<SigningKeys['newKey']>> | undefined;
    for (let attempt = 0; attempt < 5; attempt++) {
      const readAt = this.now();
      const seen = splitLive(await q.listLiveSigningKeys(this.store.db, environmentId, readAt), readAt);
      const plan = planRotation(intent, seen, algorithm);
      if (plan === 'none') return this.remember(environment, readAt, seen.active!, seen.pending);
      // Generated outside the transaction (an RSA key takes a while, and no lock waits on it), and
      // kept for the next attempt if another node's change makes this one retry.
      if (plan !== 'cancel' && material?.row.algorithm !== algorithm) material = await this.newKey(environmentId, algorithm);
      try {
        const outcome = await this.store.db.transaction().execute(async (tx) => {
          const now = this.now();
          const live = splitLive(await q.listLiveSigningKeys(tx, environmentId, now), now);
          const replan = planRotation(intent, live, algorithm);
          if (replan !== plan) throw new ScheduleChanged();
          const change = async (row: KeyRow, retiredAt: number | null) => {
            const publishUntil = retiredAt === null ? null : retiredAt + RETIRED_KEY_PUBLISH_MS;
            const changed = await q.setSigningKeyRetirement(tx, environmentId, row.id, row.retired_at, {
              retired_at: retiredAt,
              publish_until: publishUntil,
            });
            if (!changed) throw new ScheduleChanged();
            return { ...row, retired_at: retiredAt, publish_until: publishUntil };
          };
          // A pending key that never signs stays published like a retired one: a node that has not
          // re-read the schedule yet could still sign with it at its planned time.
          if (plan === 'cancel') {
            await change(live.pending!, now);
            return { now, active: await change(live.active!, null) };
          }
          const activatesAt = plan === 'immediate' ? now : now + KEY_ACTIVATION_DELAY_MS;
          let active: KeyRow | undefined;
          if (live.pending) await change(live.pending, now);
          if (live.active) active = await change(live.active, activatesAt);
          const created: KeyRow = { ...material!.row, created_at: now, activates_at: activatesAt };
          await q.insertSigningKey(tx, environmentId, created);
          return plan === 'immediate' ? { now, active: created, created } : { now, active: active!, pending: created, created };
        });
        if (material && outcome.created) {
          this.signers.set(`${environmentId}/${material.row.id}`, material.signer);
          this.verification.set(`${environmentId}/${material.row.id}`, material.verification);
        }
        return {
          ...this.remember(environment, outcome.now, outcome.active, outcome.pending),
          ...(outcome.created ? { created: outcome.created } : {}),
        };
      } catch (error) {
        if (error instanceof ScheduleChanged || isUniqueViolation(error)) continue;
        throw error;
      }
    }
    throw new Error(`Could not settle the signing keys of environment ${environmentId}`);
  }

  private remember(environment: Environment, at: number, active: KeyRow, pending: KeyRow | undefined) {
    const signer = this.signerOf(active);
    const validUntil = Math.min(at + CURRENT_KEY_RECHECK_MS, pending?.activates_at ?? Infinity);
    this.current.set(environment.id, { key: signer, forAlgorithm: environment.settings.tokenAlgorithm, validUntil });
    return { at, signer, active, ...(pending ? { pending } : {}) };
  }

  /** A fresh key pair as a row to insert (times filled in by the caller) and its public half. */
  private async newKey(environmentId: EnvironmentId, alg: TokenAlgorithm) {
    const { publicKey, privateKey } = await generate(alg);
    const kid = newId('key', environmentId);
    const jwk = { ...publicKey.export({ format: 'jwk' }), kid, alg, use: 'sig' };
    const row: KeyRow = {
      environment_id: environmentId,
      id: kid,
      algorithm: alg,
      public_jwk: JSON.stringify(jwk),
      private_key: this.encrypt(environmentId, kid, privateKey.export({ format: 'der', type: 'pkcs8' })),
      created_at: 0,
      activates_at: 0,
      retired_at: null,
      publish_until: null,
      revoked_at: null,
    };
    const signer: SigningKey = { kid, alg, privateKey, encodedHeader: encodedHeader(alg, kid) };
    return { row, signer, verification: { kid, alg, publicKey } satisfies VerificationKey };
  }

  /**
   * The public key `kid` of this environment, 'revoked', or undefined. Public keys never change, so
   * they are cached until a revocation is heard (forget); a key of another environment is never
   * found, because the look-up is scoped.
   */
  async verificationKey(environmentId: EnvironmentId, kid: string): Promise<VerificationKey | 'revoked' | undefined> {
    const cacheKey = `${environmentId}/${kid}`;
    const cached = this.verification.get(cacheKey);
    if (cached) return cached;
    const row = await q.findSigningKey(this.store.db, environmentId, kid);
    if (!row) return undefined;
    if (row.revoked_at !== null) return 'revoked';
    const key: VerificationKey = {
      kid: row.id,
      alg: row.algorithm as TokenAlgorithm,
      publicKey: createPublicKey({ key: JSON.parse(row.public_jwk) as JsonWebKey, format: 'jwk' }),
    };
    this.verification.set(cacheKey, key);
    return key;
  }

  /** The published keys: active, pending (published before it signs) and retired ones still in their window. */
  async jwks(environment: Environment): Promise<{ keys: PublicJwk[] }> {
    await this.signingKey(environment);
    const rows = await q.listPublishedSigningKeys(this.store.db, environment.id, this.now());
    return { keys: rows.map((row) => JSON.parse(row.public_jwk) as PublicJwk) };
  }

  async list(environment: Environment): Promise<SigningKeyView[]> {
    const now = this.now();
    const rows = await q.listPublishedSigningKeys(this.store.db, environment.id, now);
    return rows.map((row) => toView(row, now));
  }
}
