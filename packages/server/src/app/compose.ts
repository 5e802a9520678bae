import type { FastifyBaseLogger, FastifyRequest } from 'fastify';
import { ApiKeyService, deleteApiKeysOf } from '../apikeys/service.js';
import { AssetService } from '../assets/service.js';
import { SignInDoor } from '../auth/door.js';
import { EmailedSecrets } from '../auth/emailed-secrets.js';
import { HandoffWay } from '../auth/handoff.js';
import { ActorWay } from '../auth/actor.js';
import { ImpersonationService, type ImpersonationAudit } from '../impersonation/service.js';
import { InvitationWay } from '../auth/invitation.js';
import { PasswordResetFlow } from '../auth/password-reset.js';
import { PasskeyWay } from '../auth/passkey.js';
import { PasswordWay } from '../auth/password.js';
import { PasswordlessWay } from '../auth/passwordless.js';
import { SignUpVerification } from '../auth/sign-up-verification.js';
import { SecondFactorStep } from '../auth/second-factor.js';
import { PasskeySecondFactor } from '../auth/second-factor-passkey.js';
import { SsoWay } from '../auth/sso.js';
import { warmUpPasswordHashing } from '../identity/passwords.js';
import { PasswordService } from '../identity/password-service.js';
import { IdentityService } from '../identity/service.js';
import { DomainService } from '../invitations/domain-service.js';
import { RequestService } from '../invitations/request-service.js';
import { InvitationService } from '../invitations/service.js';
import { VerificationCodes } from '../lib/codes.js';
import { CursorCodec, deriveSubkey } from '../lib/cursor.js';
import type { RedisLink } from '../lib/redis.js';
import { MachineService } from '../machines/service.js';
import { MachineTokens } from '../machines/tokens.js';
import { Mail } from '../mail/mail.js';
import { Mailbox } from '../mail/mailbox.js';
import { OutboxWorker } from '../mail/worker.js';
import { SecondFactorWriter } from '../mfa/factor-writer.js';
import { MfaService } from '../mfa/service.js';
import { OperatorService } from '../operators/service.js';
import { PasskeyCeremonies } from '../passkeys/ceremonies.js';
import { SignInChallenges } from '../passkeys/sign-in-challenges.js';
import { PasskeyService } from '../passkeys/service.js';
import { OrganizationAccess } from '../organizations/access.js';
import { assertUserDeletable, organizationClaims } from '../organizations/claims.js';
import { MemberService } from '../organizations/member-service.js';
import { RoleService } from '../organizations/role-service.js';
import { OrganizationService } from '../organizations/service.js';
import { RateLimiter } from '../ratelimit/limiter.js';
import { routeIsCounted } from '../ratelimit/plugin.js';
import { SignInThrottle } from '../ratelimit/throttle.js';
import { AccessTokenIssuer } from '../sessions/access-token-issuer.js';
import { RefreshTokens } from '../sessions/refresh-token.js';
import type { CacheFreshness } from '../sessions/session-record.js';
import { SessionService } from '../sessions/service.js';
import { SignatureThread } from '../sessions/signature-thread.js';
import { SigningKeys } from '../sessions/signing-keys.js';
import { SessionStarter } from '../sessions/start.js';
import { AccessTokens } from '../sessions/tokens.js';
import { SsoFlowService } from '../sso/flow.js';
import { dropUntrustedIdentities, SsoIdentityService } from '../sso/identity-service.js';
import { SsoConnectionService } from '../sso/service.js';
import { TenancyService } from '../tenancy/service.js';
import { effectiveRateLimit, type Environment } from '../tenancy/settings.js';
import { RequestRate } from '../usage/request-rate.js';
import { UsageService } from '../usage/service.js';
import { SecretBox } from '../webhooks/secrets.js';
import { WebhookService } from '../webhooks/service.js';
import { WebhookWorker } from '../webhooks/worker.js';
import type { Caches } from './caches.js';
import type { AppOptions } from './options.js';

export type Services = ReturnType<typeof compose>;

/**
 * The composition root: every service and worker, built once, in dependency order, each given only
 * what it uses. Nothing is wired later (no setters, no closures over what is built further down),
 * so what a service can reach is what this file hands it. In particular the session starter goes to
 * the sign-in door alone (auth/door.ts): no other service can start a session.
 */
export function compose(options: AppOptions, redis: RedisLink | undefined, caches: Caches, log: FastifyBaseLogger) {
  const { store, instanceSecret } = options;
  const baseUrl = options.config.baseUrl;
  const now = options.now ?? Date.now;

  // ---- the ground: tenancy, keys and tokens, limits, mail
  const tenancy = new TenancyService(store, { cache: caches.cache });
  const cursors = new CursorCodec(deriveSubkey(instanceSecret, 'cursor'));
  const usage = new UsageService(store, tenancy, now);
  const keys = new SigningKeys(store, instanceSecret, now);
  const signatureThread = new SignatureThread();
  const tokens = new AccessTokens(keys, baseUrl, now, undefined, signatureThread);
  const assets = new AssetService(store, options.objectStore);
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
  const throttle = new SignInThrottle({
    clock: options.throttle?.clock ?? Date.now,
    redis,
    ...(options.throttle?.redisUsesClock ? { redisUsesClock: true } : {}),
  });
  // Shared through Redis when configured, so the console's chart counts every node.
  const requestRate = new RequestRate(now, redis ? { redis: redis.command, prefix: redis.prefix, log } : undefined);
  const outbox = new OutboxWorker(store, options.mail.transport, { log, ...options.mail.worker });
  const mail = new Mail({ branding: (tx, environment) => tenancy.branding(tx, environment), wake: () => outbox.wake() });
  const mailbox = new Mailbox(store);
  // Email codes and sign-up codes share a key: each code is bound to its own row's id.
  const emailCodes = new VerificationCodes(deriveSubkey(instanceSecret, 'email-codes'));

  // ---- sessions: the org_* claims and the last-owner rule come from organizations' own queries
  // With Redis, a cached session serves only once this node has applied every change announced
  // before the request; the environment's change number rides on the limiter's script when the
  // request is counted anyway (lib/redis.ts, docs/identity.md).
  const freshness: CacheFreshness | undefined = redis
    ? async (environment, request) => {
        const counted = limiter && request && routeIsCounted(request as FastifyRequest);
        const seq = counted
          ? (await limiter.hitOnce(request, environment.id, effectiveRateLimit(environment))).changeSequence
          : await redis.readSequence(environment.id);
        return redis.caughtUp(environment.id, seq);
      }
    : undefined;
  const refreshTokens = new RefreshTokens(instanceSecret);
  const issuer = new AccessTokenIssuer(store, tokens, now, organizationClaims(store));
  const sessions = new SessionService({ store, tokens, issuer, refreshTokens, usage, now, cache: caches.sessionCache, freshness });

  // ---- identity, then organizations, which read users through it
  // Second factors as other domains' transactions touch them (import, takeover defence); mfa/'s service comes later.
  // Passkeys' ceremonies and credentials (mfa's reverification and resets use them).
  const passkeyCeremonies = new PasskeyCeremonies({ store, now, signIns: new SignInChallenges(instanceSecret) });
  const secondFactors = new SecondFactorWriter(instanceSecret, now, passkeyCeremonies);
  const identity = new IdentityService({
    store,
    sessions,
    acceptImageUrl,
    now,
    deletionGuard: async (tx, environment, userId) => {
      await assertUserDeletable(store, tx, environment, userId);
      await deleteApiKeysOf(tx, environment, { userId });
    },
    importedTotp: (tx, environment, userId, secret) => secondFactors.storeImportedTotp(tx, environment, userId, secret),
    // Takeover defence: a proven address drops the identities linked with an address nobody vouched
    // for, and every second factor set before it.
    addressProven: async (tx, environment, userId) => {
      await dropUntrustedIdentities(tx, environment, userId);
      await secondFactors.removeAllIn(tx, environment, userId);
    },
  });
  const passwords = new PasswordService({ store, sessions, now });
  const organizationAccess = new OrganizationAccess(store);
  const organizations = new OrganizationService({
    store,
    access: organizationAccess,
    acceptImageUrl,
    now,
    identity,
    meCache: caches.meOrganizationsCache,
    meCacheServes: (session): boolean => sessions.cachesMayServe(session),
    deleting: (tx, environment, organizationId) => deleteApiKeysOf(tx, environment, { organizationId }),
  });
  const members = new MemberService({ store, access: organizationAccess, now, identity });
  const roles = new RoleService({ store, now });
  const domains = new DomainService({
    store,
    access: organizationAccess,
    tenancy,
    mail,
    now,
    codeKey: deriveSubkey(instanceSecret, 'domain-codes'),
    throttle,
    wake: () => outbox.wake(),
    log,
  });
  const membershipRequests = new RequestService({ store, access: organizationAccess, now });

  // ---- second factors and reverification; API keys (creating one's own needs a recent verification); machines
  // Passkey management after mfa: its 10-minute rule, and the second factors' bookkeeping.
  const mfa = new MfaService({ store, sessions, identity, tenancy, throttle, now, instanceSecret, writer: secondFactors, passkeys: passkeyCeremonies });
  const passkeys = new PasskeyService({
    store,
    ceremonies: passkeyCeremonies,
    identity,
    tenancy,
    sessions,
    now,
    factors: secondFactors,
    requireRecentVerification: (environment, caller, tx) => mfa.reverification.requireRecentVerification(environment, caller, tx),
  });
  const apiKeys = new ApiKeyService({
    store,
    access: organizationAccess,
    identity,
    now,
    cache: caches.apiKeyCache,
    freshness,
    assertRecentVerification: (environment, session, tx) => mfa.reverification.requireRecentVerification(environment, session, tx),
  });
  const machines = new MachineService(store, tenancy, new MachineTokens(keys, tokens, now, signatureThread), now);
  const invitations = new InvitationService({ store, access: organizationAccess, identity, passwords, now, baseUrl, mail });
  const operators = new OperatorService({ store, tenancy, identity, passwords, baseUrl, now, mail });
  // ---- impersonation: actor tokens, recorded in the operators' audit log
  const impersonationAudit: ImpersonationAudit = async ({ actor, action, target, status }) => {
    const email = actor.kind === 'operator' && actor.id ? await operators.operatorEmail(actor.id) : null;
    await operators.record({ kind: actor.kind, id: actor.id, email }, action, target, status);
  };
  const impersonation = new ImpersonationService({
    store,
    identity,
    isOperatorsEnvironment: (id) => operators.isReserved(id),
    audit: impersonationAudit,
    baseUrl,
    now,
  });

  // ---- SSO: connections, the IdP round trip, linked identities
  const ssoConnections = new SsoConnectionService(store, instanceSecret, baseUrl, now, options.sso);
  const ssoIdentities = new SsoIdentityService({ store, identity, now });
  const ssoFlows = new SsoFlowService({ store, connections: ssoConnections, identity, tenancy, baseUrl, now, identities: ssoIdentities });

  // ---- the one door, and every way in
  const door = new SignInDoor({
    store,
    starter: new SessionStarter({ store, issuer, refreshTokens, usage, now }),
    secondFactorsOf: (environment, userId) => mfa.factorsOf(environment, userId),
    now,
    // Organization domains enrol every user who signs in or up.
    signedIn: (environment, user) => domains.enrol(environment, user),
  });
  const secrets = new EmailedSecrets({ store, identity, mail, now });
  // The second step of a sign-in the door answered with an attempt: TOTP, backup codes, passkeys.
  const secondFactor = new SecondFactorStep({
    store,
    mfa,
    identity,
    door,
    now,
    passkeys: new PasskeySecondFactor({ store, ceremonies: passkeyCeremonies, writer: secondFactors, identity, tenancy }),
  });
  const ways = {
    password: new PasswordWay({ identity, passwords, throttle, door }),
    signUpVerification: new SignUpVerification({ store, identity, passwords, door, mail, now, throttle, codes: emailCodes }),
    passwordless: new PasswordlessWay({ store, identity, secrets, codes: emailCodes, door, now, throttle }),
    reset: new PasswordResetFlow({ store, identity, passwords, sessions, secrets, now, throttle }),
    sso: new SsoWay({ flows: ssoFlows, door }),
    invitation: new InvitationWay({ invitations, door }),
    handoff: new HandoffWay({ store, door, sessions, identity, now }),
    passkey: new PasskeyWay({ ceremonies: passkeyCeremonies, door, secondFactor, log }),
    secondFactor,
    actor: new ActorWay({ store, door, identity, audit: impersonationAudit, now }),
  };

  // ---- webhooks: the worker signs with the endpoints' sealed secrets; the service wakes it
  // Whether the worker starts with the app is app.ts's to decide (`startWorker`).
  const { startWorker: _startedByApp, ...webhookWorkerOptions } = options.webhooks ?? {};
  const endpointSecrets = new SecretBox(instanceSecret);
  const webhookWorker = new WebhookWorker(store, endpointSecrets, async (environmentId) => (await tenancy.getEnvironment(environmentId)).type, {
    log,
    ...(options.metrics ? { observe: options.metrics.webhookDelivery.bind(options.metrics) } : {}),
    ...webhookWorkerOptions,
  });
  const webhooks = new WebhookService(store, endpointSecrets, now, webhookWorker);

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
    throttle,
    requestRate,
    outbox,
    mailbox,
    sessions,
    identity,
    passwords,
    organizations,
    members,
    roles,
    domains,
    membershipRequests,
    mfa,
    passkeyCeremonies,
    passkeys,
    apiKeys,
    machines,
    impersonation,
    invitations,
    operators,
    ssoConnections,
    ssoIdentities,
    ssoFlows,
    ways,
    webhookWorker,
    webhooks,
  };
}
