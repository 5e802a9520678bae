import type { FastifyBaseLogger } from 'fastify';
import type { EnrollmentMode, OrganizationDomain } from '@gatehouse/contract';
import type { Store } from '../db/index.js';
import { inTransaction } from '../db/changes.js';
import { isUniqueViolation } from '../db/index.js';
import { VerificationCodes, wrongCode } from '../lib/codes.js';
import { Mail } from '../mail/mail.js';
import { emailKey, normalizeEmail } from '../identity/email.js';
import { newId, newSecret, sha256Hex } from '../lib/crypto.js';
import { ApiError, apiError } from '../lib/errors.js';
import { type Actor, type OrganizationAccess, requirePermission } from '../organizations/access.js';
import { findMembership, findOrganization } from '../organizations/queries.js';
import { PERMISSIONS } from '../organizations/roles.js';
import { DOMAIN_CODE_CLIENT, DOMAIN_CODE_NAME, overAllowance } from '../ratelimit/throttle-policies.js';
import { clientSubject, type SignInThrottle } from '../ratelimit/throttle.js';
import type { TenancyService } from '../tenancy/service.js';
import type { Environment } from '../tenancy/settings.js';
import * as dq from './domain-queries.js';
import * as q from './queries.js';

export const DOMAIN_CODE_TTL_MS = 10 * 60_000;
export const DOMAIN_CODE_ATTEMPTS = 5;
const HOUR_MS = 3_600_000;

function codesLocked(seconds: number): string {
  return `Too many wrong or expired domain codes from this network; wait ${seconds} seconds before trying again.`;
}

/**
 * Free mailbox providers: anyone can hold an address there, so proving one proves nothing about an
 * organization (Clerk refuses them for the same reason).
 */
const SHARED_MAIL_DOMAINS = new Set([
  'gmail.com',
  'googlemail.com',
  'outlook.com',
  'hotmail.com',
  'live.com',
  'msn.com',
  'yahoo.com',
  'icloud.com',
  'me.com',
  'aol.com',
  'proton.me',
  'protonmail.com',
  'gmx.com',
  'gmx.de',
  'mail.ru',
  'yandex.ru',
  'qq.com',
  '163.com',
]);

const LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;

/** Lowercased, without a trailing dot; at least two labels of letters, digits and inner hyphens. */
export function domainName(raw: string): string {
  const name = raw.trim().toLowerCase().replace(/\.$/, '');
  const labels = name.split('.');
  if (name.length > 253 || labels.length < 2 || !labels.every((l) => LABEL.test(l)) || /^\d+$/.test(labels.at(-1)!)) {
    throw apiError(
      'invalid_request',
      `Field "name" must be a domain name such as example.com (got ${JSON.stringify(raw.slice(0, 100))}).`,
      {
        fields: ['name'],
      },
    );
  }
  if (SHARED_MAIL_DOMAINS.has(name)) {
    throw apiError(
      'invalid_request',
      `${name} is a public email provider: anyone can have an address there, so it cannot enrol people into an organization. Use your organization's own domain.`,
      { fields: ['name'] },
    );
  }
  return name;
}

/** The domain part of a normalized address. */
export function domainOf(email: string): string {
  return emailKey(email).slice(emailKey(email).lastIndexOf('@') + 1);
}

export function domainView(row: Readonly<dq.DomainRow>): OrganizationDomain {
  return {
    id: row.id,
    organizationId: row.organization_id,
    name: row.name,
    enrollmentMode: row.enrollment_mode,
    verified: row.verified === 1,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

function domainNotFound(domainId: string): ApiError {
  return apiError('not_found', `Domain ${domainId} was not found in this organization.`);
}

type EnrollingUser = { id: string; email: string; email_key: string; email_verified: number };

export interface DomainServiceOptions {
  store: Store;
  access: OrganizationAccess;
  tenancy: Pick<TenancyService, 'branding'>;
  now: () => number;
  /** HMAC key for stored domain codes. */
  codeKey: Buffer;
  /** The mail primitive; by default one over `tenancy` and `wake`. */
  mail?: Mail | undefined;
  /** Counts wrong codes per client address and per domain name (ratelimit/throttle-policies.ts). */
  throttle: SignInThrottle;
  wake: () => void;
  /** Where an enrolment that failed is reported: it never fails the sign-in that ran it. */
  log?: Pick<FastifyBaseLogger, 'warn'> | undefined;
}

/**
 * Domains an organization has verified, and what they do: a user whose verified address is at one
 * gets a pending invitation (automatic_invitation) or a suggestion (automatic_suggestion), within
 * the request that signs them in or up.
 */
export class DomainService {
  private readonly codes: VerificationCodes;
  private readonly mail: Mail;

  constructor(private readonly options: DomainServiceOptions) {
    this.codes = new VerificationCodes(options.codeKey);
    this.mail = options.mail ?? new Mail({ branding: (tx, environment) => options.tenancy.branding(tx, environment), wake: options.wake });
  }

  private get db() {
    return this.options.store.db;
  }


  /** SK: the operator vouches, so the domain is verified at once. */
  async createVerified(environment: Environment, organizationId: string, input: { name: string; enrollmentMode: EnrollmentMode }) {
    const name = domainName(input.name);
    return this.options.access.withOrganization(environment, { kind: 'backend' }, organizationId, async (tx) => {
      const now = this.options.now();
      const existing = await dq.findDomainByName(tx, environment.id, organizationId, name);
      if (existing?.verified === 1) throw apiError('conflict', `${name} is already a domain of this organization.`, { fields: ['name'] });
      if (existing) {
        await dq.updateDomain(tx, environment.id, existing.id, {
          verified: 1,
          enrollment_mode: input.enrollmentMode,
          verification_hash: null,
          verification_expires_at: null,
          updated_at: now,
        });
        return domainView({ ...existing, verified: 1, enrollment_mode: input.enrollmentMode, updated_at: now });
      }
      const row = this.newRow(environment, organizationId, name, input.enrollmentMode, now);
      row.verified = 1;
      await this.insert(tx, environment, row);
      return domainView({ ...row, environment_id: environment.id });
    });
  }

  /** ST (org:manage): unverified until the code emailed to `email`, an address at the domain, comes back. */
  async createUnverified(
    environment: Environment,
    actor: Actor,
    organizationId: string,
    input: { name: string; enrollmentMode: EnrollmentMode; email: string },
  ): Promise<OrganizationDomain> {
    return this.options.access.withOrganization(environment, actor, organizationId, async (tx, org, membership) => {
      if (membership) requirePermission(membership, PERMISSIONS.manage, 'Adding a domain');
      const name = domainName(input.name);
      const email = normalizeEmail(input.email);
      if (domainOf(email) !== name) {
        throw apiError(
          'invalid_request',
          `Field "email" must be an address at ${name}: the code goes there to prove the organization uses it.`,
          {
            fields: ['email'],
          },
        );
      }
      const now = this.options.now();
      let row = await dq.findDomainByName(tx, environment.id, organizationId, name);
      if (row?.verified === 1)
        throw apiError('conflict', `${name} is already a verified domain of this organization.`, { fields: ['name'] });
      if (!row) {
        row = { ...this.newRow(environment, organizationId, name, input.enrollmentMode, now), environment_id: environment.id };
        await this.insert(tx, environment, row);
      }
      // Creating it again sends a fresh code (the old one stops working), but wrong tries keep
      // counting until an hour passes without a new code: re-adding is no way to guess more codes.
      const lastIssued = row.verification_expires_at === null ? undefined : row.verification_expires_at - DOMAIN_CODE_TTL_MS;
      const attempts = lastIssued !== undefined && now - lastIssued < HOUR_MS ? row.verification_attempts : 0;
      if (await this.mail.throttled(tx, environment, email, now)) {
        throw new ApiError(
          'rate_limited',
          `${email} has had its share of email for now (5 in 10 minutes). Use the code already sent, or try again in a few minutes.`,
          undefined,
          { 'retry-after': '600' },
        );
      }
      const { code, hash } = this.codes.create(row.id);
      const patch = {
        enrollment_mode: input.enrollmentMode,
        verification_email: email,
        verification_hash: hash,
        verification_attempts: attempts,
        verification_expires_at: now + DOMAIN_CODE_TTL_MS,
        updated_at: now,
      };
      await dq.updateDomain(tx, environment.id, row.id, patch);
      const content = { organizationName: org.name, domain: name, code, expiresInMinutes: DOMAIN_CODE_TTL_MS / 60_000 };
      await this.mail.send(tx, environment, 'domain_verification', email, content, { now, throttled: false });
      return domainView({ ...row, ...patch });
    });
  }

  /**
   * Counted per client address (a lock: 5 organizations × 5 guesses is a 429) and per domain name
   * across organizations and re-adding (past its allowance, each code takes one try), as email codes are.
   */
  async verify(
    environment: Environment,
    actor: Actor,
    organizationId: string,
    domainId: string,
    code: string,
    clientAddress: string,
  ): Promise<OrganizationDomain> {
    const named = await dq.findDomain(this.db, environment.id, organizationId, domainId);
    const subjects = [
      { policy: DOMAIN_CODE_CLIENT, subject: clientSubject(clientAddress) },
      ...(named ? [{ policy: DOMAIN_CODE_NAME, subject: named.name }] : []),
    ];
    return this.options.throttle.guard(environment.id, subjects, codesLocked, async (ticket) => {
      const oneTry = overAllowance(DOMAIN_CODE_NAME, ticket.count(DOMAIN_CODE_NAME));
      // A wrong code is recorded in a transaction that commits: thrown inside, its count would roll back.
      const outcome = await this.options.access.withOrganization(environment, actor, organizationId, async (tx, _org, membership) => {
        if (membership) requirePermission(membership, PERMISSIONS.manage, 'Verifying a domain');
        const row = await dq.findDomain(tx, environment.id, organizationId, domainId);
        if (!row) throw domainNotFound(domainId);
        if (row.verified === 1) return { domain: domainView(row) };
        const now = this.options.now();
        const live =
          row.verification_hash !== null && (row.verification_expires_at ?? 0) > now && row.verification_attempts < DOMAIN_CODE_ATTEMPTS;
        if (!live) {
          throw apiError(
            'invalid_credentials',
            'No valid code for this domain: it expired or had too many wrong tries. Add the domain again to get a new code.',
            { fields: ['code'] },
          );
        }
        const patch = { verified: 1, verification_hash: null, verification_expires_at: null, updated_at: now };
        const verdict = await this.codes.check({
          stored: row.verification_hash!,
          binding: row.id,
          code,
          recordWrong: async () => {
            const attempts = oneTry ? DOMAIN_CODE_ATTEMPTS : row.verification_attempts + 1;
            await dq.updateDomain(tx, environment.id, row.id, { verification_attempts: attempts, updated_at: now });
            return DOMAIN_CODE_ATTEMPTS - attempts;
          },
          // Under the organization's lock: nothing else consumes it meanwhile.
          consume: async () => {
            await dq.updateDomain(tx, environment.id, row.id, patch);
            return true;
          },
        });
        if ('triesLeft' in verdict) return { triesLeft: verdict.triesLeft };
        return { domain: domainView({ ...row, ...patch }) };
      });
      if ('domain' in outcome) return outcome.domain;
      throw wrongCode('triesLeft' in outcome ? outcome.triesLeft : 0, '. Add the domain again to get a new code.', ['code']);
    });
  }

  async list(environment: Environment, actor: Actor, organizationId: string): Promise<OrganizationDomain[]> {
    return inTransaction(this.db, async (tx) => {
      if (!(await findOrganization(tx, environment.id, organizationId))) {
        throw apiError('not_found', `Organization ${organizationId} was not found in this environment.`);
      }
      if (actor.kind === 'member') await this.options.access.liveMembership(tx, environment.id, organizationId, actor.userId);
      return (await dq.listDomains(tx, environment.id, organizationId)).map(domainView);
    });
  }

  async update(environment: Environment, actor: Actor, organizationId: string, domainId: string, enrollmentMode: EnrollmentMode) {
    return this.options.access.withOrganization(environment, actor, organizationId, async (tx, _org, membership) => {
      if (membership) requirePermission(membership, PERMISSIONS.manage, 'Changing a domain');
      const row = await dq.findDomain(tx, environment.id, organizationId, domainId);
      if (!row) throw domainNotFound(domainId);
      const now = this.options.now();
      await dq.updateDomain(tx, environment.id, domainId, { enrollment_mode: enrollmentMode, updated_at: now });
      return domainView({ ...row, enrollment_mode: enrollmentMode, updated_at: now });
    });
  }

  async remove(environment: Environment, actor: Actor, organizationId: string, domainId: string) {
    return this.options.access.withOrganization(environment, actor, organizationId, async (tx, _org, membership) => {
      if (membership) requirePermission(membership, PERMISSIONS.manage, 'Removing a domain');
      if (!(await dq.findDomain(tx, environment.id, organizationId, domainId))) throw domainNotFound(domainId);
      await dq.deleteDomain(tx, environment.id, domainId);
      // Suggestions it made and nobody acted on go with it; requests already filed stay for a decision.
      await dq.deleteSuggestionsOfDomain(tx, environment.id, domainId);
      return { id: domainId, deleted: true as const };
    });
  }

  /**
   * Called when a session is created (every sign-in and sign-up): a user whose verified address is
   * at an enrolling domain gets an invitation or a suggestion, once per organization. An
   * invitation that was revoked or accepted, or a suggestion already decided, is not made again.
   */
  async enrol(environment: Environment, user: EnrollingUser): Promise<void> {
    if (user.email_verified !== 1) return;
    // The session is committed before this runs: a failure here is logged, never the sign-in's
    // answer, and the next sign-in enrols again. One organization's failure does not stop the others.
    const domains = await dq.enrollingDomains(this.db, environment.id, domainOf(user.email)).catch((error: unknown) => {
      this.options.log?.warn({ err: error }, 'domain enrolment failed');
      return [];
    });
    for (const domain of domains) {
      await this.enrolAt(environment, user, domain).catch((error: unknown) => {
        this.options.log?.warn({ err: error, organizationId: domain.organization_id }, 'domain enrolment failed');
      });
    }
  }

  private async enrolAt(environment: Environment, user: EnrollingUser, domain: dq.DomainRow): Promise<void> {
    await this.options.access.withOrganization(environment, { kind: 'backend' }, domain.organization_id, async (tx) => {
      if (await findMembership(tx, environment.id, domain.organization_id, user.id)) return;
      const now = this.options.now();
      if (domain.enrollment_mode === 'automatic_invitation') {
        if (await q.hasAnyInvitation(tx, environment.id, domain.organization_id, user.email_key)) return;
        await q.insertInvitation(
          tx,
          environment.id,
          {
            id: newId('orginv', environment.id),
            organization_id: domain.organization_id,
            email: user.email,
            email_key: user.email_key,
            role: 'member',
            status: 'pending',
            // Nothing is emailed: the invitation shows in the user's list, and its token is never used.
            token_hash: sha256Hex(newSecret('', 32)),
            redirect_url: '',
            inviter_user_id: null,
            accepted_user_id: null,
            expires_at: now + 30 * 86_400_000,
            sent_at: 0,
            created_at: now,
            updated_at: now,
          },
          now,
        );
      } else if (!(await dq.findRequestOf(tx, environment.id, domain.organization_id, user.id))) {
        // Checked under the organization's lock, so no concurrent enrolment inserts it meanwhile.
        await dq.insertRequest(tx, environment.id, {
          id: newId('orgreq', environment.id),
          organization_id: domain.organization_id,
          user_id: user.id,
          domain_id: domain.id,
          status: 'suggested',
          created_at: now,
          updated_at: now,
        });
      }
    });
  }

  private newRow(environment: Environment, organizationId: string, name: string, mode: EnrollmentMode, now: number) {
    return {
      id: newId('orgdom', environment.id),
      organization_id: organizationId,
      name,
      enrollment_mode: mode,
      verified: 0,
      verification_email: null,
      verification_hash: null,
      verification_attempts: 0,
      verification_expires_at: null,
      created_at: now,
      updated_at: now,
    } as Omit<dq.DomainRow, 'environment_id'>;
  }

  private async insert(tx: Parameters<typeof dq.insertDomain>[0], environment: Environment, row: Omit<dq.DomainRow, 'environment_id'>) {
    try {
      await dq.insertDomain(tx, environment.id, row);
    } catch (error) {
      if (isUniqueViolation(error))
        throw apiError('conflict', `${row.name} is already a domain of this organization.`, { fields: ['name'] });
      throw error;
    }
  }
}
