import type { FastifyBaseLogger, FastifyRequest } from 'fastify';
import type { AppOptions } from '../app.js';
import { AssetService } from '../assets/service.js';
import type { AccessTokenVerifier } from '../http/credentials.js';
import { warmUpPasswordHashing } from '../identity/passwords.js';
import { IdentityService } from '../identity/service.js';
import { DomainService } from '../invitations/domain-service.js';
import { SignUpVerification } from '../flows/sign-up-verification.js';
import { RequestService } from '../invitations/request-service.js';
import { MfaService } from '../mfa/service.js';
import { CursorCodec, deriveSubkey } from '../lib/cursor.js';
import type { RedisLink } from '../lib/redis.js';
import { OrganizationAccess } from '../organizations/access.js';
import { MemberService } from '../organizations/member-service.js';
import { RoleService } from '../organizations/role-service.js';
import { OrganizationService } from '../organizations/service.js';
import { RateLimiter } from '../ratelimit/limiter.js';
import { routeIsCounted } from '../ratelimit/plugin.js';
import { SignInThrottle } from '../ratelimit/throttle.js';
import { RefreshTokens } from '../sessions/refresh-token.js';
import type { CacheFreshness } from '../sessions/session-record.js';
import { SessionService } from '../sessions/service.js';
import { SigningKeys } from '../sessions/signing-keys.js';
import { AccessTokens } from '../sessions/tokens.js';
import { SignatureThread } from '../sessions/signature-thread.js';
import { TenancyService } from '../tenancy/service.js';
import { effectiveRateLimit, type Environment } from '../tenancy/settings.js';
import { UsageService } from '../usage/service.js';
import type { Caches } from './caches.js';

export type Services = Awaited<ReturnType<typeof buildServices>>;

/** Every domain's service, wired to the others it needs; routes get only these. */
export function buildServices(
  options: AppOptions,
  redis: RedisLink | undefined,
  { cache, sessionCache, meOrganizationsCache }: Caches,
  log?: Pick<FastifyBaseLogger, 'warn'>,
) {
  const tenancy = new TenancyService(options.store, { cache });
  // The email outbox worker is built with the routes; until then a committed email waits for its poll.
  let wakeOutbox = (): void => undefined;
  const setOutboxWake = (wake: () => void) => {
    wakeOutbox = wake;
  };
  const cursors = new CursorCodec(deriveSubkey(options.instanceSecret, 'cursor'));
  const now = options.now ?? Date.now;
  const usage = new UsageService(options.store, tenancy, now);
  const keys = new SigningKeys(options.store, options.instanceSecret, now);
  const signatureThread = new SignatureThread();
  const tokens = new AccessTokens(keys, options.config.baseUrl, now, undefined, signatureThread);
  const assets = new AssetService(options.store, options.objectStore);
  const acceptImageUrl = (environment: Environment, url: string) => assets.acceptImageUrl(environment, url);
  const limiter =
    options.rateLimit === false
      ? undefined
      : new RateLimiter({
          clock: options.rateLimit?.clock ?? Date.now,
          redis,
          ...(options.rateLimit?.granularityMs ? { granularityMs: options.rateLimit.granularityMs } : {}),
          ...(options.rateLimit?.redisUsesClock ? { redisUsesClock: true } : {}),
        });
  // With Redis, a cached session serves only once this node has applied every change announced
  // before the request; the environment's change number rides on the limiter's script when the
  // request is counted anyway (lib/redis.ts, docs/identity.md).
  const link = redis;
  const freshness: CacheFreshness | undefined = link
    ? async (environment, request) => {
        const counted = limiter && request && routeIsCounted(request as FastifyRequest);
        const seq = counted
          ? (await limiter.hitOnce(request, environment.id, effectiveRateLimit(environment))).changeSequence
          : await link.readSequence(environment.id);
        return link.caughtUp(environment.id, seq);
      }
    : undefined;
  const sessions: SessionService = new SessionService({
    store: options.store,
    tokens,
    refreshTokens: new RefreshTokens(options.instanceSecret),
    usage,
    now,
    extraClaims: (context) => organizations.claimsFor(context),
    cache: sessionCache,
    freshness,
    signedIn: (environment, user) => domains.enrol(environment, user),
  });
  const throttle = new SignInThrottle({
    clock: options.throttle?.clock ?? Date.now,
    redis,
    ...(options.throttle?.redisUsesClock ? { redisUsesClock: true } : {}),
  });
  const identity: IdentityService = new IdentityService({
    throttle,
    store: options.store,
    sessions,
    acceptImageUrl,
    now,
    deletionGuard: (tx, environment, userId) => organizations.assertUserDeletable(tx, environment, userId),
    importedTotp: (tx, environment, userId, secret) => mfa.storeImportedTotp(tx, environment, userId, secret),
  });
  // Second factors (mfa/); an address proven for the first time removes those set before it.
  const mfa: MfaService = new MfaService({
    store: options.store,
    sessions,
    identity,
    tenancy,
    throttle,
    now,
    instanceSecret: options.instanceSecret,
  });
  identity.onAddressProven((tx, environment, userId) => mfa.removeAllIn(tx, environment, userId));
  const signUpVerification = new SignUpVerification({
    store: options.store,
    identity,
    sessions,
    tenancy,
    now,
    throttle,
    codeKey: deriveSubkey(options.instanceSecret, 'email-codes'),
    wake: () => wakeOutbox(),
  });
  const organizationAccess = new OrganizationAccess(options.store);
  const organizations: OrganizationService = new OrganizationService({
    store: options.store,
    access: organizationAccess,
    acceptImageUrl,
    now,
    identity,
    sessions,
    meCache: meOrganizationsCache,
    meCacheServes: (session): boolean => sessions.cachesMayServe(session),
  });
  const members = new MemberService({ store: options.store, access: organizationAccess, now, identity });
  const domains: DomainService = new DomainService({
    store: options.store,
    access: organizationAccess,
    tenancy,
    now,
    codeKey: deriveSubkey(options.instanceSecret, 'domain-codes'),
    throttle,
    wake: () => wakeOutbox(),
    log,
  });
  const membershipRequests = new RequestService({ store: options.store, access: organizationAccess, now });
  const roles = new RoleService({ store: options.store, now });
  const verifyAccessToken: AccessTokenVerifier = (token, request) => sessions.verifyAccessToken(token, request);
  warmUpPasswordHashing().catch(() => undefined);

  return {
    tenancy,
    cursors,
    now,
    usage,
    keys,
    tokens,
    signatureThread,
    assets,
    limiter,
    link,
    sessions,
    throttle,
    identity,
    mfa,
    signUpVerification,
    organizations,
    organizationAccess,
    members,
    domains,
    membershipRequests,
    roles,
    verifyAccessToken,
    setOutboxWake,
  };
}
