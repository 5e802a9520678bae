import type { EnvironmentId } from '../lib/ids.js';
import type { Session, SessionTokens } from '@gatehouse/contract';
import type { Kysely, Transaction } from 'kysely';
import { inTransaction } from '../db/changes.js';
import type { Store } from '../db/index.js';
import type { Database, UsersTable } from '../db/schema.js';
import type { SessionIdentity } from '../http/credentials.js';
import { ApiError, notFound } from '../lib/errors.js';
import { constantTimeEqual, sha256Hex } from '../lib/crypto.js';
import type { Environment } from '../tenancy/settings.js';
import type { UsageService } from '../usage/service.js';
import * as q from './queries.js';
import type { RefreshTokens } from './refresh-token.js';
import type { AccessTokens } from './tokens.js';
import { AccessTokenIssuer, type ExtraClaimsProvider, type RequestContext, type SessionRef } from './access-token-issuer.js';
import { factorsOf, verifiesSecondFactor, withFactor, parseAmr, type Amr, type SessionFactors } from './factors.js';
import { sessionLiveness, sessionRecordOf, type CacheFreshness, type SessionCache, type SessionRecord } from './session-record.js';

type Db = Kysely<Database> | Transaction<Database>;

/** Inside this window a rotated refresh token still yields its (same) successor: racing tabs. */
export const REFRESH_GRACE_MS = 10_000;

export type { SessionTokens };

export type { ClaimsContext, ExtraClaimsProvider, RequestContext } from './access-token-issuer.js';

/**
 * Switches the session's active organization as part of a refresh (POST /v1/auth/switch-organization).
 * `authorize` runs after the refresh token is judged genuine and current, in the transaction that
 * then writes the session, and throws when the session's user may not act as that organization.
 */
export interface OrganizationSwitch {
  organizationId: string | null;
  /** `session`: what the session has verified (an organization may require a second factor). */
  authorize: (tx: Transaction<Database>, userId: string, session: SessionFactors) => Promise<void>;
}

export type SessionView = Session;

const REVOKED_MESSAGE = 'This session has been revoked (signed out, password changed, or revoked by an administrator). Sign in again.';
const EXPIRED_MESSAGE = 'This session has expired (it reached its lifetime or was inactive too long). Sign in again.';
const UNKNOWN_REFRESH_MESSAGE =
  'Unknown refresh token. Send the refreshToken of the latest sign-in or refresh, to the environment that issued it.';

export interface SessionServiceOptions {
  store: Store;
  tokens: AccessTokens;
  refreshTokens: RefreshTokens;
  usage: UsageService;
  now: () => number;
  extraClaims?: ExtraClaimsProvider | undefined;
  /** Without one, every `/v1/me*` request reads its session. */
  cache?: SessionCache | undefined;
  /** With several nodes (Redis), checked before the cache serves; without, the cache serves as is. */
  freshness?: CacheFreshness | undefined;
  /** The access-token signer shared with the session starter; by default one over `tokens` and `extraClaims`. */
  issuer?: AccessTokenIssuer | undefined;
}

export class SessionService {
  private readonly store: Store;
  private readonly tokens: AccessTokens;
  private readonly issuer: AccessTokenIssuer;
  private readonly refreshTokens: RefreshTokens;
  private readonly usage: UsageService;
  private readonly now: () => number;
  private readonly cache: SessionCache | undefined;
  private readonly freshness: CacheFreshness | undefined;
  /** Requests (by their session) that found this node caught up, whose other cached reads may serve too. */
  private readonly caughtUpFor = new WeakSet<SessionIdentity>();
  private readonly usersReadWithSession = new WeakMap<SessionIdentity, Readonly<UsersTable>>();

  constructor(options: SessionServiceOptions) {
    this.store = options.store;
    this.tokens = options.tokens;
    this.refreshTokens = options.refreshTokens;
    this.usage = options.usage;
    this.now = options.now;
    this.issuer = options.issuer ?? new AccessTokenIssuer(options.store, options.tokens, options.now, options.extraClaims);
    this.cache = options.cache;
    this.freshness = options.freshness;
  }

  private get db() {
    return this.store.db;
  }

  /**
   * Exchanges a refresh token for a new pair. The presented token is rotated (compare-and-set on its
   * hash). Presented again within REFRESH_GRACE_MS of its rotation, it yields the same successor;
   * later, or when it is older than the previous generation, it is reuse: the session is revoked.
   */
  async refresh(environment: Environment, token: string, context: RequestContext, switchTo?: OrganizationSwitch): Promise<SessionTokens> {
    const parsed = this.refreshTokens.parse(environment.id, token);
    if (!parsed) throw new ApiError('unauthenticated', UNKNOWN_REFRESH_MESSAGE);
    const presentedHash = sha256Hex(token);
    const successor = this.refreshTokens.successor(environment.id, token, parsed);
    const successorHash = sha256Hex(successor);

    if (!switchTo) {
      // Almost every refresh presents the current token of a live session: one round trip, not two.
      const now = this.now();
      const rotated = await q.rotateCurrentRefreshToken(this.db, environment.id, parsed.sessionId, {
        presentedHash,
        successorHash,
        generation: parsed.generation + 1,
        now,
        inactivityMs: environment.settings.sessionInactivitySeconds * 1000,
      });
      if (rotated) {
        const current = {
          id: parsed.sessionId,
          userId: rotated.user_id,
          activeOrganizationId: rotated.active_organization_id,
          factors: factorsOf(rotated),
        };
        return this.issuePair(environment, current, successor, context);
      }
    }

    for (let attempt = 0; attempt < 2; attempt++) {
      const session = await q.findSession(this.db, environment.id, parsed.sessionId);
      if (!session) throw new ApiError('unauthenticated', UNKNOWN_REFRESH_MESSAGE);
      const now = this.now();
      const liveness = sessionLiveness(environment, session, now);
      if (liveness === 'revoked') throw new ApiError('session_revoked', REVOKED_MESSAGE);
      if (liveness === 'expired') throw new ApiError('unauthenticated', EXPIRED_MESSAGE);

      const current = {
        id: session.id,
        userId: session.user_id,
        activeOrganizationId: switchTo ? switchTo.organizationId : session.active_organization_id,
        factors: factorsOf(session),
      };
      if (constantTimeEqual(session.refresh_hash, presentedHash)) {
        const rotate = (db: Db) =>
          q.rotateRefreshToken(db, environment.id, session.id, {
            presentedHash,
            successorHash,
            generation: parsed.generation + 1,
            now,
            ...(switchTo ? { activeOrganizationId: switchTo.organizationId } : {}),
          });
        const rotated = switchTo
          ? await inTransaction(this.db, async (tx) => {
              await switchTo.authorize(tx, session.user_id, factorsOf(session));
              return rotate(tx);
            })
          : await rotate(this.db);
        if (!rotated) continue; // a concurrent refresh rotated it first: judge again as a reuse
        return this.issuePair(environment, current, successor, context);
      }
      if (
        session.previous_hash !== null &&
        constantTimeEqual(session.previous_hash, presentedHash) &&
        constantTimeEqual(session.refresh_hash, successorHash)
      ) {
        if (session.rotated_at !== null && now - session.rotated_at <= REFRESH_GRACE_MS) {
          if (switchTo) {
            await inTransaction(this.db, async (tx) => {
              await switchTo.authorize(tx, session.user_id, factorsOf(session));
              await q.setActiveOrganization(tx, environment.id, session.id, switchTo.organizationId);
            });
          }
          return this.issuePair(environment, current, successor, context);
        }
        await this.revokeForReuse(environment, session.id);
      }
      if (parsed.generation < session.generation) await this.revokeForReuse(environment, session.id);
      // A genuine token that is neither current nor older cannot exist; treat it as unknown.
      throw new ApiError('unauthenticated', UNKNOWN_REFRESH_MESSAGE);
    }
    throw new ApiError('unauthenticated', UNKNOWN_REFRESH_MESSAGE);
  }

  private async issuePair(
    environment: Environment,
    session: SessionRef,
    refreshToken: string,
    context: RequestContext,
  ): Promise<SessionTokens> {
    const { token, expiresIn } = await this.issuer.issue(environment, session, context);
    await this.usage.recordActivity(environment.id, session.userId);
    return { accessToken: token, refreshToken, expiresIn, tokenType: 'Bearer' };
  }

  private async revokeForReuse(environment: Environment, sessionId: string): Promise<never> {
    await q.revokeSession(this.db, environment.id, sessionId, this.now());
    throw new ApiError(
      'session_revoked',
      'This refresh token was already used, so it may have been stolen: the session has been revoked. Sign in again.',
    );
  }

  /**
   * Records that the live session `sessionId` of `userId` verified `factor` now (reverification, a
   * second factor): adds it to the session's amr and stamps the first- or second-factor time. In
   * the caller's transaction when given. False when the session is not live or not the user's.
   */
  async recordFactor(environment: Environment, userId: string, sessionId: string, factor: Amr, db: Db = this.db): Promise<boolean> {
    const second = verifiesSecondFactor(factor);
    // A passkey verifies both at once (a passkey sign-in sets both fva values to 0).
    const first = !second || factor === 'passkey';
    // A concurrent verification of the same session may change its amr first: read it again.
    for (let attempt = 0; attempt < 3; attempt++) {
      const session = await q.findSession(db, environment.id, sessionId);
      const now = this.now();
      if (!session || session.user_id !== userId || sessionLiveness(environment, session, now) !== 'live') return false;
      const written = await q.recordSessionFactor(db, environment.id, sessionId, {
        expectedAmr: session.amr,
        amr: JSON.stringify(withFactor(parseAmr(session.amr), factor)),
        ...(second ? { second_factor_at: now } : {}),
        ...(first ? { first_factor_at: now } : {}),
      });
      if (written) return true;
    }
    return false;
  }

  /**
   * A new access token for a live session, its refresh token unchanged (reverification: the new
   * `amr` and `fva`). 401 when the session is no longer live.
   */
  async reissue(environment: Environment, userId: string, sessionId: string, context: RequestContext) {
    const session = await q.findSession(this.db, environment.id, sessionId);
    if (!session || session.user_id !== userId)
      throw new ApiError('unauthenticated', 'The session of this access token does not exist. Sign in again.');
    const liveness = sessionLiveness(environment, session, this.now());
    if (liveness === 'revoked') throw new ApiError('session_revoked', REVOKED_MESSAGE);
    if (liveness === 'expired') throw new ApiError('unauthenticated', EXPIRED_MESSAGE);
    const current = { id: session.id, userId, activeOrganizationId: session.active_organization_id, factors: factorsOf(session) };
    const { token, expiresIn } = await this.issuer.issue(environment, current, context);
    return { accessToken: token, expiresIn, tokenType: 'Bearer' as const };
  }

  /** When the live session last verified a factor of any kind (reverification's window); undefined when it is not live. */
  async lastVerification(
    environment: Environment,
    userId: string,
    sessionId: string,
    db: Db = this.db,
  ): Promise<SessionFactors | undefined> {
    // Inside a change's transaction the session stays as read until it commits: a revocation cannot
    // slip in between. The user's row is locked before it, in the order a revoke-all takes them.
    if (db.isTransaction) await q.lockSessionsOwner(this.store, db as Transaction<Database>, environment.id, userId);
    const session = await q.findSession(db, environment.id, sessionId, db.isTransaction ? this.store : undefined);
    if (!session || session.user_id !== userId || sessionLiveness(environment, session, this.now()) !== 'live') return undefined;
    return factorsOf(session);
  }

  /** Signs out the session a refresh token belongs to. Idempotent for an already revoked session. */
  async signOut(environment: Environment, token: string): Promise<void> {
    const parsed = this.refreshTokens.parse(environment.id, token);
    const session = parsed ? await q.findSession(this.db, environment.id, parsed.sessionId) : undefined;
    if (!parsed || !session) throw new ApiError('unauthenticated', UNKNOWN_REFRESH_MESSAGE);
    await q.revokeSession(this.db, environment.id, session.id, this.now());
  }

  /**
   * The AccessTokenVerifier of the credential plugin: a valid token (see AccessTokens.verify) of a
   * session that is still live. Checking the session is what makes Gatehouse's own /v1/me* refuse a
   * revoked session at once, while an application verifying offline accepts the token until `exp`.
   * It costs one primary-key read, or none when the session is cached: a cached session is dropped
   * when its revocation commits, before the revoking request is answered, and with several nodes
   * it serves only once this node has applied every change announced before (see CacheFreshness).
   */
  async verifyAccessToken(token: string, request?: object): Promise<{ environment: Environment; session: SessionIdentity }> {
    const { environmentId, kid, claims } = await this.tokens.verify(token);
    let cached = this.cache?.get(environmentId, claims.sid);
    let caughtUp = this.freshness === undefined;
    // Only a live copy needs checking: revocation and expiry are final, so a copy that refuses is right.
    if (cached && this.freshness && sessionLiveness(cached.environment, cached.times, this.now()) === 'live') {
      caughtUp = await this.freshness(cached.environment, request);
      // Taken again: a change applied while waiting has dropped it.
      cached = caughtUp ? this.cache?.get(environmentId, claims.sid) : undefined;
      // So is the token: a key revocation announced before this request is applied by now.
      if (caughtUp) await this.tokens.verify(token);
    }
    let record = cached ?? (await this.readSession(environmentId, claims.sid, kid));
    let liveness = record && sessionLiveness(record.environment, record.times, this.now());
    // Rotations are not announced (queries.ts): a cached copy's last activity may be older than the
    // row's, which can only make it look inactive too soon. Such a refusal is checked on the row.
    if (cached && liveness === 'expired' && cached.times.revoked_at === null && this.now() < cached.times.expires_at) {
      record = await this.readSession(environmentId, claims.sid, kid);
      liveness = record && sessionLiveness(record.environment, record.times, this.now());
    }
    if (!record || record.user.id !== claims.sub) {
      throw new ApiError('unauthenticated', 'The session of this access token does not exist. Sign in again.');
    }
    if (liveness === 'revoked') throw new ApiError('session_revoked', REVOKED_MESSAGE);
    if (liveness === 'expired') throw new ApiError('unauthenticated', EXPIRED_MESSAGE);
    const session: SessionIdentity = {
      userId: claims.sub,
      sessionId: claims.sid,
      activeOrganizationId: record.activeOrganizationId,
      claims,
    };
    this.usersReadWithSession.set(session, record.user);
    if (caughtUp) this.caughtUpFor.add(session);
    return { environment: record.environment, session };
  }

  /**
   * Whether the other `/v1/me*` caches (the organization list) may serve this request: without
   * several nodes always; with them, only when its session check found this node caught up.
   */
  cachesMayServe(session: SessionIdentity): boolean {
    return this.freshness === undefined || this.caughtUpFor.has(session);
  }

  /**
   * The session from the database, and the token's key with it: this node's keys may not have
   * heard of a revocation on another yet, and only a cached session waits for that (freshness).
   */
  private async readSession(environmentId: EnvironmentId, sessionId: string, kid: string): Promise<SessionRecord | undefined> {
    const generation = this.cache?.generation ?? 0;
    const row = await q.findSessionWithEnvironment(this.db, environmentId, sessionId, kid);
    if (!row) return undefined;
    if (row.key_revoked_at !== null) {
      throw new ApiError(
        'unauthenticated',
        `The signing key "${kid}" of this token was revoked. Refresh the session for a token signed by the current key.`,
      );
    }
    const record = sessionRecordOf(environmentId, row);
    this.cache?.set({ environmentId, userId: row.session_user_id, sessionId }, record, generation);
    return record;
  }

  /**
   * The user row read along with the session when this request's access token was verified, so
   * GET /v1/me costs one query. Undefined for any other session object.
   */
  userReadWith(session: SessionIdentity): Readonly<UsersTable> | undefined {
    return this.usersReadWithSession.get(session);
  }

  private liveWindow(environment: Environment) {
    const now = this.now();
    return { now, activeSince: now - environment.settings.sessionInactivitySeconds * 1000 };
  }

  async listForUser(environment: Environment, userId: string, currentSessionId?: string): Promise<SessionView[]> {
    const rows = await q.listLiveSessions(this.db, environment.id, userId, this.liveWindow(environment));
    return rows.map((row) => ({
      id: row.id,
      createdAt: row.created_at,
      lastActiveAt: row.last_active_at,
      expiresAt: row.expires_at,
      userAgent: row.user_agent,
      amr: parseAmr(row.amr),
      ...(row.actor ? { actor: { sub: row.actor } } : {}),
      current: row.id === currentSessionId,
    }));
  }

  /** Revokes one of the user's sessions (/v1/me, or the secret-key API); 404 when it is not theirs or not live. */
  async revokeOwn(environment: Environment, userId: string, sessionId: string): Promise<void> {
    const session = await q.findSession(this.db, environment.id, sessionId);
    if (!session || session.user_id !== userId || sessionLiveness(environment, session, this.now()) !== 'live') {
      throw notFound(`Live session ${sessionId} of this user`);
    }
    await q.revokeSession(this.db, environment.id, sessionId, this.now(), userId);
  }

  /** Revokes every live session of the user except `keepSessionId`; returns how many. */
  async revokeAllForUser(environment: Environment, userId: string, keepSessionId?: string, db: Db = this.db): Promise<number> {
    return q.revokeUserSessions(this.store, db, environment.id, userId, this.liveWindow(environment), keepSessionId);
  }

  /** Clears the session's active organization if it is still `organizationId` (a concurrent switch wins). */
  async clearActiveOrganization(environment: Environment, sessionId: string, organizationId: string): Promise<void> {
    await q.clearActiveOrganization(this.db, environment.id, sessionId, organizationId);
  }
}
