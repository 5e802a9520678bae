import type { Passkey, PasskeyCreateBody } from '@gatehouse/contract';
import type { Transaction } from 'kysely';
import { inTransaction } from '../db/changes.js';
import { isUniqueViolation, type Store } from '../db/index.js';
import type { Database } from '../db/schema.js';
import type { IdentityService } from '../identity/service.js';
import { apiError, notFound } from '../lib/errors.js';
import type { SessionService } from '../sessions/service.js';
import { parseAmr } from '../sessions/factors.js';
import type { TenancyService } from '../tenancy/service.js';
import type { Environment } from '../tenancy/settings.js';
import { duplicate, sessionAttempt, type PasskeyCeremonies } from './ceremonies.js';
import * as q from './queries.js';

/** The signed-in caller: a user and the session the request came with. */
export interface Caller {
  userId: string;
  sessionId: string;
}

export interface PasskeyServiceOptions {
  store: Store;
  ceremonies: PasskeyCeremonies;
  identity: Pick<IdentityService, 'findUser' | 'lockUser'>;
  tenancy: Pick<TenancyService, 'getProject'>;
  sessions: Pick<SessionService, 'lastVerification'>;
  /** The second factors' bookkeeping (mfa's), in the change's transaction: twoFactorEnabled, user.updated, backup codes. */
  factors: { passkeysChangedIn(tx: Transaction<Database>, environment: Environment, userId: string): Promise<void> };
  /** mfa's 10-minute rule (refuses actor sessions too), in the change's transaction. */
  requireRecentVerification: (environment: Environment, caller: Caller, tx: Transaction<Database>) => Promise<void>;
  now: () => number;
}

const DEFAULT_NAME = 'Passkey';

export function passkeyView(row: q.PasskeyRow): Passkey {
  return {
    id: row.id,
    name: row.name,
    createdAt: Number(row.created_at),
    lastUsedAt: row.last_used_at === null ? null : Number(row.last_used_at),
    backedUp: row.backed_up === 1,
  };
}

/**
 * The user's passkeys (docs/passkeys.md): registration on the session surface, listing, renaming,
 * removal (reverification), and the operators' view. The ceremonies themselves are ceremonies.ts.
 */
export class PasskeyService {
  constructor(private readonly options: PasskeyServiceOptions) {}

  private get db() {
    return this.options.store.db;
  }

  /** Passkeys serve as a first factor (authMethods.passkey) and as a second one (mfa not "off"). */
  assertRegistrationOpen(environment: Environment): void {
    if (!environment.settings.authMethods.passkey && environment.settings.mfa === 'off') {
      throw apiError(
        'method_disabled',
        'Passkeys are turned off for this environment (authMethods.passkey is off and mfa is "off"), so none can be registered.',
      );
    }
  }

  /**
   * ACTOR GUARD (impersonation): a session started with an actor token may not add, rename or
   * remove a passkey (403 forbidden, before any reverification rule). The impersonation work
   * replaces this check with its shared guard; until then the session's amr says it.
   */
  private async refuseActor(environment: Environment, caller: Caller): Promise<void> {
    const factors = await this.options.sessions.lastVerification(environment, caller.userId, caller.sessionId);
    if (factors && parseAmr(factors.amr).includes('actor')) {
      throw apiError('forbidden', 'A session started with an actor token cannot change passkeys.');
    }
  }

  /**
   * POST /v1/me/passkeys/registration. A passkey is a way in, so adding one needs a verification
   * within 10 minutes (a fresh sign-in counts): a stolen, stale session cannot plant its own.
   */
  async registrationOptions(environment: Environment, caller: Caller, requestOrigin: string | undefined) {
    this.assertRegistrationOpen(environment);
    await this.refuseActor(environment, caller);
    await inTransaction(this.db, (tx) => this.options.requireRecentVerification(environment, caller, tx));
    const user = await this.options.identity.findUser(this.db, environment, caller.userId);
    if (!user) throw notFound(`User ${caller.userId}`);
    const { project } = await this.options.tenancy.getProject(environment.projectId);
    const displayName = [user.first_name, user.last_name].filter(Boolean).join(' ');
    const options = await this.options.ceremonies.registrationOptions(
      environment,
      { id: user.id, email: user.email, displayName },
      sessionAttempt('registration', caller.sessionId),
      requestOrigin,
      project.name,
    );
    return { options };
  }

  /** POST /v1/me/passkeys: the registration response to the session's latest options. */
  async create(environment: Environment, caller: Caller, body: PasskeyCreateBody): Promise<Passkey> {
    this.assertRegistrationOpen(environment);
    await this.refuseActor(environment, caller);
    const credential = await this.options.ceremonies.verifyRegistration(
      environment,
      caller.userId,
      sessionAttempt('registration', caller.sessionId),
      body.response,
    );
    try {
      const row = await inTransaction(this.db, async (tx) => {
        await this.options.requireRecentVerification(environment, caller, tx);
        const user = await this.options.identity.lockUser(tx, environment, caller.userId);
        if (!user) throw notFound(`User ${caller.userId}`);
        const stored = await this.options.ceremonies.store(tx, environment, user, credential, body.name ?? DEFAULT_NAME);
        await this.options.factors.passkeysChangedIn(tx, environment, caller.userId);
        return stored;
      });
      return passkeyView(row);
    } catch (error) {
      // Two registrations of one credential at once: the unique index decides.
      if (isUniqueViolation(error)) throw duplicate();
      throw error;
    }
  }

  async list(environment: Environment, userId: string): Promise<{ data: Passkey[] }> {
    return { data: (await q.listPasskeys(this.db, environment.id, userId)).map(passkeyView) };
  }

  async rename(environment: Environment, caller: Caller, id: string, name: string): Promise<Passkey> {
    await this.refuseActor(environment, caller);
    if (!(await q.renamePasskey(this.db, environment.id, caller.userId, id, name))) throw notFound(`Passkey ${id}`);
    return passkeyView((await q.findPasskey(this.db, environment.id, caller.userId, id))!);
  }

  /** DELETE /v1/me/passkeys/{id} (reverification). */
  async remove(environment: Environment, caller: Caller, id: string): Promise<void> {
    await this.refuseActor(environment, caller);
    await inTransaction(this.db, async (tx) => {
      await this.options.requireRecentVerification(environment, caller, tx);
      await this.removeIn(tx, environment, caller.userId, id);
    });
  }

  private async removeIn(tx: Transaction<Database>, environment: Environment, userId: string, id: string): Promise<void> {
    // The user's row before the factor tables, as every change of second factors takes them (mfa/service.ts).
    if (!(await this.options.identity.lockUser(tx, environment, userId))) throw notFound(`User ${userId}`);
    if (!(await q.deletePasskey(tx, environment.id, userId, id))) throw notFound(`Passkey ${id}`);
    // The last second factor takes the backup codes with it (DESIGN "Removing the last second factor").
    await this.options.factors.passkeysChangedIn(tx, environment, userId);
  }

  // ---- operators (SK)

  async listForUser(environment: Environment, userId: string): Promise<{ data: Passkey[] }> {
    if (!(await this.options.identity.findUser(this.db, environment, userId))) throw notFound(`User ${userId}`);
    return this.list(environment, userId);
  }

  async removeForUser(environment: Environment, userId: string, id: string): Promise<void> {
    await inTransaction(this.db, async (tx) => {
      if (!(await this.options.identity.lockUser(tx, environment, userId))) throw notFound(`User ${userId}`);
      await this.removeIn(tx, environment, userId, id);
    });
  }
}
