import type { ApiKey, CreateOwnApiKeyBody, CreatedApiKey, VerifiedApiKey } from '@gatehouse/contract';
import { inTransaction } from '../db/changes.js';
import type { Store } from '../db/index.js';
import type { SessionIdentity } from '../http/credentials.js';
import type { IdentityService } from '../identity/service.js';
import { newId } from '../lib/crypto.js';
import { ApiError, apiError, notFound } from '../lib/errors.js';
import type { EnvironmentId } from '../lib/ids.js';
import { requirePermission, type OrganizationAccess, type Tx } from '../organizations/access.js';
import { PERMISSIONS } from '../organizations/roles.js';
import type { CacheFreshness } from '../sessions/session-record.js';
import type { Environment } from '../tenancy/settings.js';
import type { KeyCache, KeyRecord } from './cache.js';
import * as q from './queries.js';
import { ABSENT_HASH, hashMatches, newApiKeySecret, parseApiKeySecret, parseScopes, validScopes } from './secrets.js';

/** A subject holds at most this many keys, so its listing stays one page. */
export const MAX_KEYS_PER_SUBJECT = 100;
/** `lastUsedAt` is written at most this often per key: verifying is a read, not a write. */
export const LAST_USED_EVERY_MS = 60_000;

export type NewKey = CreateOwnApiKeyBody;

/**
 * The check that the session verified a factor recently, run before a user creates a key for
 * themself (DESIGN: reverification). Supplied by the MFA feature; until then every session passes.
 */
export type RecentVerificationCheck = (environment: Environment, session: SessionIdentity, tx: Tx) => Promise<void>;

export interface ApiKeyServiceOptions {
  store: Store;
  access: OrganizationAccess;
  identity: Pick<IdentityService, 'lockUser'>;
  now: () => number;
  cache?: KeyCache | undefined;
  freshness?: CacheFreshness | undefined;
  /** `403 reverification_required` unless the session verified a factor in the last 10 minutes (mfa/). */
  assertRecentVerification: RecentVerificationCheck;
}

/** Deletes every key of a user or an organization in the caller's transaction (the owner is being deleted). */
export function deleteApiKeysOf(tx: Tx, environment: Environment, owner: { userId: string } | { organizationId: string }): Promise<void> {
  return q.deleteKeysOf(tx, environment.id, owner);
}

function refused(): ApiError {
  return new ApiError('unauthenticated', 'Unknown, revoked or expired API key. Create a new key, and send it exactly as it was shown.');
}

function keyView(row: q.ApiKeyRow): ApiKey {
  return {
    id: row.id,
    name: row.name,
    subject: (row.user_id ?? row.organization_id)!,
    scopes: parseScopes(row.scopes),
    createdAt: row.created_at,
    expiresAt: row.expires_at,
    lastUsedAt: row.last_used_at,
  };
}

/**
 * API keys of users and organizations (docs/api-keys.md). The subject comes from the credential on
 * the session surface (the caller, or their current organization with org:manage read in the
 * transaction), and only the secret key names one in a body.
 */
export class ApiKeyService {
  private readonly store: Store;
  private readonly access: OrganizationAccess;
  private readonly identity: ApiKeyServiceOptions['identity'];
  private readonly now: () => number;
  private readonly cache: KeyCache | undefined;
  private readonly freshness: CacheFreshness | undefined;
  private readonly recentVerification: RecentVerificationCheck;
  /** When this node last wrote each key's `lastUsedAt` (bounded; forgetting only costs a write). */
  private readonly touched = new Map<string, number>();

  constructor(options: ApiKeyServiceOptions) {
    this.store = options.store;
    this.access = options.access;
    this.identity = options.identity;
    this.now = options.now;
    this.cache = options.cache;
    this.freshness = options.freshness;
    this.recentVerification = options.assertRecentVerification;
  }

  private get db() {
    return this.store.db;
  }

  // ---- creation

  /** A key for the signed-in user; the one place that asks for a recent verification. */
  async createOwn(environment: Environment, session: SessionIdentity, input: NewKey): Promise<CreatedApiKey> {
    return inTransaction(this.db, async (tx) => {
      // Locked, as its deletion locks it first: a key cannot be added to a user being deleted.
      if (!(await this.identity.lockUser(tx, environment, session.userId))) throw notFound(`User ${session.userId}`);
      // In the transaction that writes the key: a revocation cannot commit between the check and the key.
      await this.recentVerification(environment, session, tx);
      return this.insert(tx, environment.id, { userId: session.userId }, input);
    });
  }

  /** A key for the session's current organization, with org:manage in the live membership. */
  async createForOrganization(environment: Environment, session: SessionIdentity, input: NewKey): Promise<CreatedApiKey> {
    const organizationId = this.access.currentOrganizationId(session);
    return this.access.withOrganization(
      environment,
      { kind: 'member', userId: session.userId },
      organizationId,
      async (tx, _org, membership) => {
        requirePermission(membership!, PERMISSIONS.manage, "Creating the organization's API keys");
        return this.insert(tx, environment.id, { organizationId }, input);
      },
    );
  }

  /** The secret key's: any user or organization of the environment, named by `subject`. */
  async createForSubject(environment: Environment, subject: string, input: NewKey): Promise<CreatedApiKey> {
    if (subject.startsWith('user_')) {
      return inTransaction(this.db, async (tx) => {
        if (!(await this.identity.lockUser(tx, environment, subject))) throw notFound(`User ${subject}`);
        return this.insert(tx, environment.id, { userId: subject }, input);
      });
    }
    if (subject.startsWith('org_')) {
      return this.access.withOrganization(environment, { kind: 'backend' }, subject, (tx) =>
        this.insert(tx, environment.id, { organizationId: subject }, input),
      );
    }
    throw apiError('invalid_request', 'Field "subject" must be a user id (user_…) or an organization id (org_…) of this environment.', {
      fields: ['subject'],
    });
  }

  private async insert(tx: Tx, environmentId: EnvironmentId, owner: Exclude<q.KeyOwner, 'any'>, input: NewKey): Promise<CreatedApiKey> {
    const name = input.name.trim();
    if (name === '') throw apiError('invalid_request', 'Field "name" must not be blank.', { fields: ['name'] });
    const scopes = validScopes(input.scopes);
    if ((await q.countKeysOf(tx, environmentId, owner)) >= MAX_KEYS_PER_SUBJECT) {
      throw apiError(
        'conflict',
        `This subject already has ${MAX_KEYS_PER_SUBJECT} API keys, the most it may hold. Revoke keys it no longer uses first.`,
      );
    }
    const now = this.now();
    const { secret, lookup, hash } = newApiKeySecret();
    const row: q.ApiKeyRow = {
      id: newId('ak', environmentId),
      user_id: 'userId' in owner ? owner.userId : null,
      organization_id: 'organizationId' in owner ? owner.organizationId : null,
      name,
      lookup,
      secret_hash: hash,
      scopes: JSON.stringify(scopes),
      created_at: now,
      expires_at: input.expiresInSeconds === undefined ? null : now + input.expiresInSeconds * 1000,
      last_used_at: null,
    };
    await q.insertKey(tx, environmentId, row);
    return { apiKey: keyView(row), secret };
  }

  // ---- listings and revocation

  async listOwn(environment: Environment, session: SessionIdentity): Promise<ApiKey[]> {
    const rows = await q.listKeys(this.db, environment.id, { userId: session.userId }, { limit: MAX_KEYS_PER_SUBJECT });
    return rows.map(keyView);
  }

  async listForOrganization(environment: Environment, session: SessionIdentity): Promise<ApiKey[]> {
    const organizationId = this.access.currentOrganizationId(session);
    const rows = await this.asManager(environment, session, organizationId, "Listing the organization's API keys", (tx) =>
      q.listKeys(tx, environment.id, { organizationId }, { limit: MAX_KEYS_PER_SUBJECT }),
    );
    return rows.map(keyView);
  }

  /** The secret key's listing, newest first: every key, or one subject's. */
  async listPage(
    environment: Environment,
    subject: string | undefined,
    options: { limit: number; beforeId?: string | undefined },
  ): Promise<{ keys: ApiKey[]; hasMore: boolean }> {
    const owner: q.KeyOwner =
      subject === undefined ? 'any' : subject.startsWith('org_') ? { organizationId: subject } : { userId: subject };
    const rows = await q.listKeys(this.db, environment.id, owner, { limit: options.limit + 1, beforeId: options.beforeId });
    return { keys: rows.slice(0, options.limit).map(keyView), hasMore: rows.length > options.limit };
  }

  async revokeOwn(environment: Environment, session: SessionIdentity, keyId: string): Promise<void> {
    if (!(await q.deleteKey(this.db, environment.id, keyId, { userId: session.userId }))) throw notFound(`API key ${keyId} of this user`);
  }

  async revokeForOrganization(environment: Environment, session: SessionIdentity, keyId: string): Promise<void> {
    const organizationId = this.access.currentOrganizationId(session);
    const deleted = await this.asManager(environment, session, organizationId, "Revoking the organization's API keys", (tx) =>
      q.deleteKey(tx, environment.id, keyId, { organizationId }),
    );
    if (!deleted) throw notFound(`API key ${keyId} of organization ${organizationId}`);
  }

  async revoke(environment: Environment, keyId: string): Promise<void> {
    if (!(await q.deleteKey(this.db, environment.id, keyId, 'any'))) throw notFound(`API key ${keyId}`);
  }

  private asManager<T>(
    environment: Environment,
    session: SessionIdentity,
    organizationId: string,
    action: string,
    work: (tx: Tx) => Promise<T>,
  ) {
    return this.access.withOrganization(
      environment,
      { kind: 'member', userId: session.userId },
      organizationId,
      async (tx, _org, membership) => {
        requirePermission(membership!, PERMISSIONS.manage, action);
        return work(tx);
      },
    );
  }

  /**
   * In the transaction that deletes a user (its row locked) or an organization (its row locked):
   * their keys go with them, and every node drops them.
   */
  deleteAllOf(tx: Tx, environment: Environment, owner: { userId: string } | { organizationId: string }): Promise<void> {
    return deleteApiKeysOf(tx, environment, owner);
  }

  // ---- verification

  /**
   * The key a secret belongs to, or `401 unauthenticated`: unknown, revoked (deleted) and expired
   * keys get the same answer after the same look-up and hash comparison. A revoked key is dropped
   * from every node's cache before its revocation is answered (apiKey change), and a cached key
   * serves only once this node has applied every change announced before the request.
   */
  async verify(environment: Environment, secret: string, request?: object): Promise<VerifiedApiKey> {
    const parsed = parseApiKeySecret(secret);
    if (!parsed) throw refused();
    const records = await this.recordsFor(environment, parsed.lookup, request);
    let found: KeyRecord | undefined;
    for (const record of records) if (hashMatches(record.secretHash, parsed.hash)) found = record;
    if (records.length === 0) hashMatches(ABSENT_HASH, parsed.hash);
    const now = this.now();
    if (!found || (found.expiresAt !== null && found.expiresAt <= now)) throw refused();
    await this.touch(environment.id, found, now);
    return { id: found.id, subject: (found.userId ?? found.organizationId)!, scopes: [...found.scopes], expiresAt: found.expiresAt };
  }

  private async recordsFor(environment: Environment, lookup: string, request: object | undefined): Promise<readonly KeyRecord[]> {
    let cached = this.cache?.get(environment.id, lookup);
    if (cached && this.freshness) {
      // Taken again once caught up: a change applied while waiting has dropped it.
      cached = (await this.freshness(environment, request)) ? this.cache?.get(environment.id, lookup) : undefined;
    }
    if (cached) return cached;
    const generation = this.cache?.generation ?? 0;
    const rows = await q.findByLookup(this.db, environment.id, lookup);
    // A banned user's keys answer like unknown ones.
    const records: KeyRecord[] = rows
      .filter((row) => row.banned !== 1)
      .map((row) => ({
        id: row.id,
        userId: row.user_id,
        organizationId: row.organization_id,
        secretHash: row.secret_hash,
        scopes: parseScopes(row.scopes),
        expiresAt: row.expires_at,
        lastUsedAt: row.last_used_at,
      }));
    const banned = rows.filter((row) => row.banned === 1 && row.user_id !== null).map((row) => row.user_id!);
    if (records.length > 0) this.cache?.set(environment.id, lookup, records, generation, banned);
    return records;
  }

  private async touch(environmentId: EnvironmentId, record: KeyRecord, now: number): Promise<void> {
    const last = Math.max(this.touched.get(record.id) ?? 0, record.lastUsedAt ?? 0);
    if (now - last < LAST_USED_EVERY_MS) return;
    if (this.touched.size >= 10_000) this.touched.clear();
    this.touched.set(record.id, now);
    // A failed write loses one mark of use, never the verification.
    await q.touchKey(this.db, environmentId, record.id, now, LAST_USED_EVERY_MS).catch(() => undefined);
  }
}
