import type { AuditLogEntry, Operator, OperatorInvitation } from '@gatehouse/contract';
import { inTransaction } from '../db/changes.js';
import { lockForUpdate, type Store } from '../db/index.js';
import type { OperatorAuditLogTable } from '../db/schema.js';
import type { Mail } from '../mail/mail.js';
import { emailKeyOf, parseEmail } from '../identity/email.js';
import type { IdentityService } from '../identity/service.js';
import type { PasswordService } from '../identity/password-service.js';
import { newId, newSecret, sha256Hex } from '../lib/crypto.js';
import { ApiError, apiError } from '../lib/errors.js';
import { normalizeOrigin } from '../tenancy/origin.js';
import type { TenancyService } from '../tenancy/service.js';
import type { Environment } from '../tenancy/settings.js';
import * as q from './queries.js';

/** The reserved project and the environment whose users are the operators. */
export interface OperatorsEnvironment {
  projectId: string;
  /** The production environment: its users are the operators. */
  environment: Environment;
  /** Both of the project's environments (the development one stays unused). */
  environmentIds: string[];
}

export const OPERATORS_PROJECT_NAME = 'Gatehouse operators';
const INVITATION_TTL_MS = 7 * 86_400_000;
const INVALID_LINK =
  'This console link is invalid or already used. Ask an operator for a new invitation, or restart the server to print a new setup link while no operator exists.';

export interface Actor {
  kind: OperatorAuditLogTable['actor_kind'];
  id: string | null;
  email: string | null;
}

export interface OperatorServiceOptions {
  store: Store;
  tenancy: TenancyService;
  identity: IdentityService;
  passwords: Pick<PasswordService, 'checkPassword' | 'hashPassword'>;
  baseUrl: string;
  now: () => number;
  /** Sends the operator invitations (the outbox is woken at their commit). */
  mail: Mail;
}

/**
 * Operators are users of a reserved project's production environment, so the console signs in with
 * Gatehouse's own flows. That project is never listed by the platform API (tenancy/queries.ts) and
 * every platform request naming it is answered 404 (http/credentials.ts).
 */
export class OperatorService {
  private reserved: Promise<OperatorsEnvironment> | undefined;

  constructor(private readonly options: OperatorServiceOptions) {}

  private get db() {
    return this.options.store.db;
  }

  /** The operators' environment, created on first use (several nodes may race: one marker wins). */
  operatorsEnvironment(): Promise<OperatorsEnvironment> {
    this.reserved ??= this.ensureReserved();
    this.reserved.catch(() => (this.reserved = undefined));
    return this.reserved;
  }

  /**
   * Whether a project or environment id is the reserved one (platform requests naming it are 404).
   * Only reads: until the console is first used there is nothing to hide, and a platform request
   * never writes on its way in (two nodes creating the project at once would race for SQLite's lock).
   */
  async isReserved(id: string): Promise<boolean> {
    const reserved = this.known ?? (await this.findReserved());
    return reserved !== undefined && (id === reserved.projectId || reserved.environmentIds.includes(id));
  }

  private known: { projectId: string; environmentIds: string[] } | undefined;

  private async findReserved(): Promise<{ projectId: string; environmentIds: string[] } | undefined> {
    const projectId = await q.readOperatorsProjectId(this.db);
    if (!projectId) return undefined;
    const { environments } = await this.options.tenancy.getProject(projectId);
    this.known = { projectId, environmentIds: environments.map((e) => e.id) };
    return this.known;
  }

  private async ensureReserved(): Promise<OperatorsEnvironment> {
    const { tenancy } = this.options;
    let projectId = await q.readOperatorsProjectId(this.db);
    if (!projectId) {
      const { project } = await tenancy.createProjectWithSecretKeys({ name: OPERATORS_PROJECT_NAME }, []);
      if (await q.claimOperatorsProject(this.db, project.id)) {
        projectId = project.id;
      } else {
        await tenancy.deleteProject(project.id);
        projectId = (await q.readOperatorsProjectId(this.db))!;
      }
    }
    const { environments } = await tenancy.getProject(projectId);
    let environment = environments.find((e) => e.type === 'production')!;
    // The console is served at the base URL; its origin is the only one its sign-in accepts.
    const origin = normalizeOrigin(new URL(this.options.baseUrl).origin);
    const s = environment.settings;
    const wanted = {
      callbackOrigins: origin ? [origin] : [],
      // The emailed code is the way back in for an operator whose password is throttled (six wrong
      // tries lock it for up to 15 minutes) or forgotten: without it the console has no fallback.
      authMethods: { password: true, magicLink: false, emailCode: true, sso: false, passkey: false },
      signUp: false,
      // Every user of this environment is an operator: an organization's invitations would make
      // operators outside the audited operator invitations, so operators create none.
      usersCanCreateOrganizations: false,
    };
    if (
      JSON.stringify(s.callbackOrigins) !== JSON.stringify(wanted.callbackOrigins) ||
      JSON.stringify(s.authMethods) !== JSON.stringify(wanted.authMethods) ||
      s.signUp ||
      s.usersCanCreateOrganizations
    ) {
      environment = await tenancy.updateSettings(environment.id, wanted);
    }
    return { projectId, environment, environmentIds: environments.map((e) => e.id) };
  }

  /** The current environment (settings may have changed since it was reserved). */
  private async environment(): Promise<Environment> {
    const { environment } = await this.operatorsEnvironment();
    return this.options.tenancy.getEnvironment(environment.id);
  }

  async hasOperator(): Promise<boolean> {
    const environment = await this.environment();
    const { users } = await this.options.identity.listUsers(environment, { limit: 1, beforeId: undefined, email: undefined, query: undefined });
    return users.length > 0;
  }

  /**
   * While no operator exists, a new one-time setup link (printed at every start). Only its hash
   * is stored; it stays valid until used, and the first operator's creation retires them all.
   */
  async setupLinkIfNoOperator(): Promise<string | null> {
    if (await this.hasOperator()) return null;
    const token = newSecret('gh_setup_', 32);
    await q.insertToken(this.db, {
      id: newId('opt'),
      token_hash: sha256Hex(token),
      email: null,
      invited_by: null,
      created_at: this.options.now(),
      expires_at: null,
      used_at: null,
    });
    return this.link(token);
  }

  private link(token: string): string {
    return `${this.options.baseUrl}/console/setup?token=${encodeURIComponent(token)}`;
  }

  /** Creates an operator from a setup link or an invitation; the link works once. */
  async setup(input: { token: string; email?: string | undefined; password: string; firstName?: string | undefined; lastName?: string | undefined }) {
    this.options.passwords.checkPassword(input.password);
    const environment = await this.environment();
    const tokenHash = sha256Hex(input.token);
    const now = this.options.now();
    // A link that cannot work is refused before the password is hashed: no argon2 work for guesses.
    const unchecked = await q.findTokenByHash(this.db, tokenHash);
    if (!unchecked || unchecked.used_at !== null || (unchecked.expires_at !== null && unchecked.expires_at <= now)) {
      throw new ApiError('unauthenticated', INVALID_LINK);
    }
    const passwordHash = await this.options.passwords.hashPassword(input.password);
    const operatorExists = await this.hasOperator();
    const user = await inTransaction(this.db, async (tx) => {
      // One setup at a time, instance-wide: two printed links used at once would otherwise each lock
      // its own token and then wait for the other's in retireSetupTokens (a deadlock on PostgreSQL).
      await q.lockOperatorSetup(this.options.store, tx);
      const row = await lockForUpdate(this.options.store, tx.selectFrom('operator_tokens').selectAll().where('token_hash', '=', tokenHash)).executeTakeFirst();
      if (!row || row.used_at !== null || (row.expires_at !== null && row.expires_at <= now)) throw new ApiError('unauthenticated', INVALID_LINK);
      let email: string;
      if (row.email === null) {
        // The printed link creates the first operator only (checked before the transaction; the
        // first operator's creation also retires every other printed link, below).
        if (operatorExists) throw new ApiError('unauthenticated', INVALID_LINK);
        if (input.email === undefined) throw apiError('invalid_request', 'Send "email": the first operator\'s address.', { fields: ['email'] });
        const parsed = parseEmail(input.email);
        if (!('email' in parsed)) throw apiError('invalid_request', `"email" ${parsed.problem}.`, { fields: ['email'] });
        email = parsed.email;
      } else {
        if (input.email !== undefined && emailKeyOf(input.email) !== emailKeyOf(row.email)) {
          throw apiError('invalid_request', `This invitation is for ${row.email}; leave "email" out or send that address.`, { fields: ['email'] });
        }
        email = row.email;
      }
      if (!(await q.consumeToken(tx, row.id, now))) throw new ApiError('unauthenticated', INVALID_LINK);
      if (row.email === null) await q.retireSetupTokens(tx, now);
      const created = await this.options.identity.createVerifiedUserIn(
        tx,
        environment,
        { email, firstName: input.firstName, lastName: input.lastName },
        passwordHash,
      );
      await q.insertAuditEntry(tx, {
        id: newId('aud'),
        at: now,
        actor_kind: row.email === null ? 'setup' : row.invited_by === null ? 'platform_key' : 'operator',
        actor_id: row.email === null ? created.id : row.invited_by,
        actor_email: row.email === null ? created.email : null,
        action: row.email === null ? 'Created the first operator' : 'Accepted an operator invitation',
        target: created.email,
        status: 201,
      });
      return created;
    });
    return { id: user.id, email: user.email, firstName: user.first_name, lastName: user.last_name, createdAt: user.created_at };
  }

  async invite(actor: Actor, rawEmail: string): Promise<OperatorInvitation> {
    const parsed = parseEmail(rawEmail);
    if (!('email' in parsed)) throw apiError('invalid_request', `"email" ${parsed.problem}.`, { fields: ['email'] });
    const environment = await this.environment();
    const existing = await this.options.identity.findUserByEmail(this.db, environment, parsed.email);
    if (existing) throw apiError('conflict', `${parsed.email} is already an operator.`);
    const token = newSecret('gh_invite_', 32);
    const now = this.options.now();
    const id = newId('opi');
    const url = this.link(token);
    const expiresAt = now + INVITATION_TTL_MS;
    await inTransaction(this.db, async (tx) => {
      await q.insertToken(tx, {
        id,
        token_hash: sha256Hex(token),
        email: parsed.email,
        invited_by: actor.id,
        created_at: now,
        expires_at: expiresAt,
        used_at: null,
      });
      const content = { organizationName: 'the operators of this Gatehouse', link: url, expiresInMinutes: INVITATION_TTL_MS / 60_000 };
      await this.options.mail.send(tx, environment, 'organization_invitation', parsed.email, content, {
        now,
        throttled: false,
        branding: { projectName: OPERATORS_PROJECT_NAME, logoUrl: null },
      });
    });
    return { id, email: parsed.email, url, expiresAt };
  }

  async list(limit: number, beforeId: string | undefined): Promise<{ operators: Operator[]; hasMore: boolean }> {
    const environment = await this.environment();
    const { users, hasMore } = await this.options.identity.listUsers(environment, { limit, beforeId, email: undefined, query: undefined });
    return { operators: users.map((u) => ({ id: u.id, email: u.email, firstName: u.firstName, lastName: u.lastName, createdAt: u.createdAt })), hasMore };
  }

  /** Removes an operator (their sessions end with the user); the last one cannot be removed. */
  async remove(userId: string): Promise<void> {
    const environment = await this.environment();
    await this.options.identity.deleteUser(environment, userId, async (tx) => {
      // Removals queue on the operators' marker row: two at once cannot each count the other as the one who stays.
      await q.lockOperatorSetup(this.options.store, tx);
      if (!(await q.anotherOperator(tx, environment.id, userId))) {
        throw apiError('forbidden', 'This is the last operator; invite another operator before removing this one.');
      }
    });
  }

  async operatorEmail(userId: string): Promise<string | null> {
    const environment = await this.environment();
    const row = await this.options.identity.findUser(this.db, environment, userId);
    return row?.email ?? null;
  }

  async record(actor: Actor, action: string, target: string | null, status: number): Promise<void> {
    await q.insertAuditEntry(this.db, {
      id: newId('aud'),
      at: this.options.now(),
      actor_kind: actor.kind,
      actor_id: actor.id,
      actor_email: actor.email,
      action,
      target,
      status,
    });
  }

  /** Deletes the audit entries older than `days` (AUDIT_RETENTION_DAYS); answers how many went. */
  async pruneAuditLog(days: number): Promise<number> {
    return q.deleteAuditEntriesBefore(this.db, this.options.now() - days * 86_400_000);
  }

  async auditLog(limit: number, before: { at: number; id: string } | undefined): Promise<{ entries: AuditLogEntry[]; hasMore: boolean }> {
    const rows = await q.listAuditEntries(this.db, limit + 1, before);
    return {
      entries: rows.slice(0, limit).map((r) => ({
        id: r.id,
        at: r.at,
        actor: { kind: r.actor_kind, id: r.actor_id, email: r.actor_email },
        action: r.action,
        target: r.target,
        status: r.status,
      })),
      hasMore: rows.length > limit,
    };
  }
}
