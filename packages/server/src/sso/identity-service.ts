/**
 * The provider accounts linked to a user (DESIGN "Social connections and linking"): recorded by
 * sign-ins and explicit links, each with its webhook event in the same transaction; listed and
 * unlinked by the user (or an operator), never leaving the account without a way to sign in.
 */
import type { UserIdentity } from '@gatehouse/contract';
import type { Transaction } from 'kysely';
import type { Store } from '../db/index.js';
import type { Database } from '../db/schema.js';
import { inTransaction } from '../db/changes.js';
import { emailKey } from '../identity/email.js';
import type { IdentityService } from '../identity/service.js';
import { newId, sha256Hex } from '../lib/crypto.js';
import { apiError, notFound } from '../lib/errors.js';
import type { Environment } from '../tenancy/settings.js';
import { atomically, recordEvent } from '../db/events.js';
import { providerOf, readConnection, type Connection, type OidcConfig } from './connections.js';
import { SignInRefused } from './refusal.js';
import * as iq from './identity-queries.js';
import * as q from './queries.js';

/** A link's provider answer, held until the user who started it completes it. */
export interface HeldLink {
  subject: string;
  email: string | null;
  emailTrusted: boolean;
}

/** What the sign-in flow needs to write identities. */
export interface IdentityRecorder {
  record(environment: Environment, connection: Connection, input: RecordInput): Promise<{ userId: string; identityId: string }>;
  holdable(connection: Connection, known: { user_id: string } | undefined, userId: string, link: HeldLink): HeldLink;
}

interface RecordInput {
  subject: string;
  userId: string;
  email: string | null;
  emailTrusted: boolean;
  now: number;
}

function taken(connection: Connection): SignInRefused {
  return new SignInRefused('account_exists', `This ${connection.name} account is already linked to another user. Sign in with it to reach that account, or unlink it there first.`);
}

function view(connection: Connection, row: { id: string; email: string | null; created_at: number }): UserIdentity {
  return { id: row.id, connectionId: connection.id, type: connection.type, provider: providerOf(connection), email: row.email, createdAt: row.created_at };
}

/** A listed row carries its connection's type and config: the provider is read from them. */
function rowView(row: iq.IdentityListRow): UserIdentity {
  const preset = row.type === 'oidc' ? (JSON.parse(row.config) as OidcConfig).preset : null;
  return { id: row.id, connectionId: row.connection_id, type: row.type, provider: preset ?? row.type, email: row.email, createdAt: row.created_at };
}

export class SsoIdentityService implements IdentityRecorder {
  constructor(
    private readonly options: { store: Store; identity: IdentityService; now: () => number },
  ) {}

  private get db() {
    return this.options.store.db;
  }

  async record(environment: Environment, connection: Connection, input: RecordInput): Promise<{ userId: string; identityId: string }> {
    const id = newId('idn', environment.id);
    await atomically(this.db, async (tx) => {
      const inserted = await q.insertIdentity(tx, environment.id, {
        id,
        connection_id: connection.id,
        subject: input.subject,
        user_id: input.userId,
        email: input.email,
        email_trusted: input.emailTrusted,
        now: input.now,
      });
      if (inserted) await recordEvent(tx, environment.id, 'identity.created', { ...view(connection, { id, email: input.email, created_at: input.now }), userId: input.userId });
    });
    // A racing first sign-in of the same subject may have won: its row (and user) is the one.
    const row = await q.findIdentity(this.db, environment.id, connection.id, input.subject);
    return { userId: row?.user_id ?? input.userId, identityId: row?.id ?? id };
  }

  /** At the callback: a provider account of another user goes back at once as account_exists. */
  holdable(connection: Connection, known: { user_id: string } | undefined, userId: string, link: HeldLink): HeldLink {
    if (known && known.user_id !== userId) throw taken(connection);
    return link;
  }

  /**
   * POST /v1/me/identities/complete: the link's token, presented by the session of the user who
   * started it, joins the provider account to that user whatever its email says (the user proved
   * both ends), unless it belongs to someone else by now. Another user's session cannot complete it,
   * so a start sent to someone else's browser links nothing (link CSRF).
   */
  async complete(environment: Environment, userId: string, token: string): Promise<UserIdentity> {
    const held = await iq.consumeLink(this.db, environment.id, sha256Hex(token), userId, this.options.now());
    if (!held || held.link_subject === null) {
      throw apiError('invalid_request', 'This link token is invalid, expired, already used, or belongs to another signed-in user; connect the account again.', { fields: ['token'] });
    }
    const row = await q.findConnection(this.db, environment.id, held.connection_id);
    if (!row) throw notFound(`SSO connection ${held.connection_id}`);
    const connection = readConnection(row);
    const subject = held.link_subject;
    const email = held.link_email;
    const known = await q.findIdentity(this.db, environment.id, connection.id, subject);
    if (known) {
      if (known.user_id !== userId) throw apiError('conflict', taken(connection).message);
      await q.touchIdentity(this.db, environment.id, connection.id, subject, email, this.options.now());
      return view(connection, known);
    }
    const user = await this.options.identity.findUser(this.db, environment, userId);
    if (!user) throw notFound(`User ${userId}`);
    // The user linked it themselves while signed in: not a squat, whatever the provider says of the
    // email, once the account's address is proven. Before that the account may be a squatter's
    // (signed up with someone else's address), so the owner's first proof drops the link.
    // A trusted email that is the user's own address proves it, as at sign-in (and so is kept).
    const proves = email !== null && held.link_email_trusted === 1 && user.email_verified !== 1 && user.email_key === emailKey(email);
    const emailTrusted = user.email_verified === 1 || proves;
    const recorded = await this.record(environment, connection, { subject, userId, email, emailTrusted, now: this.options.now() });
    if (recorded.userId !== userId) throw apiError('conflict', taken(connection).message);
    if (proves) {
      await this.options.identity.markEmailVerified(this.db, environment, userId);
    }
    const identity = await q.findIdentity(this.db, environment.id, connection.id, subject);
    return view(connection, identity!);
  }

  async list(environment: Environment, userId: string): Promise<UserIdentity[]> {
    const rows = await iq.listIdentitiesOfUser(this.db, environment.id, userId);
    return rows.map(rowView);
  }

  /**
   * Unlinks one identity. The user's row is locked first, so two unlinks (or an unlink and a
   * password removal) cannot each leave the other as the last way in and both succeed.
   */
  async unlink(environment: Environment, userId: string, identityId: string): Promise<void> {
    await inTransaction(this.db, async (tx) => {
      const user = await this.options.identity.lockUser(tx, environment, userId);
      if (!user) throw notFound(`User ${userId}`);
      const identities = await iq.listIdentitiesOfUser(tx, environment.id, userId);
      const target = identities.find((i) => i.id === identityId);
      if (!target) throw notFound(`Identity ${identityId}`);
      const { magicLink, emailCode } = environment.settings.authMethods;
      // The ways in besides this identity (DESIGN "Explicit linking"). Passkeys join this list where they exist.
      const otherWays = [
        identities.length > 1,
        user.password_hash !== null,
        user.email_verified === 1 && (magicLink || emailCode),
      ];
      if (!otherWays.some(Boolean)) {
        throw apiError(
          'conflict',
          'This is the last way to sign in to this account. Set a password, verify the email address, or link another provider before unlinking it.',
        );
      }
      await iq.deleteIdentityOfUser(tx, environment.id, userId, identityId);
      await recordEvent(tx, environment.id, 'identity.deleted', { ...rowView(target), userId });
    });
  }
}

/**
 * The user's address was just proven for the first time (identity/service.ts runs this in that
 * transaction): identities linked with an email nobody vouched for go, as a password set before
 * does. Whoever created the account through a provider that does not verify emails, with someone
 * else's address, loses the way in they kept; the owner can link their own provider explicitly.
 */
export async function dropUntrustedIdentities(tx: Transaction<Database>, environment: Environment, userId: string): Promise<void> {
  for (const row of await iq.listIdentitiesOfUser(tx, environment.id, userId)) {
    if (row.email_trusted === 1) continue;
    await iq.deleteIdentityOfUser(tx, environment.id, userId, row.id);
    await recordEvent(tx, environment.id, 'identity.deleted', { ...rowView(row), userId });
  }
}
