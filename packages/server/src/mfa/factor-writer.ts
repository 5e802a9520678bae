import type { Transaction } from 'kysely';
import type { Database } from '../db/schema.js';
import { apiError } from '../lib/errors.js';
import { Sealer } from '../lib/sealing.js';
import type { Environment } from '../tenancy/settings.js';
import type { PasskeyCeremonies } from '../passkeys/ceremonies.js';
import * as q from './queries.js';
import { base32Decode } from './totp.js';

/** What a TOTP secret is sealed to: its environment and user, so a sealed value cannot be moved to another account. */
export function totpBinding(environment: Environment, userId: string): string {
  return `${environment.id}/${userId}/totp`;
}

/**
 * What other domains' transactions do to second factors: identity's import stores a TOTP secret,
 * and the first proof of an address removes every factor set before it. It needs no other service,
 * so the composition root hands it to identity before the MFA service (which reads identity) exists.
 */
export class SecondFactorWriter {
  readonly sealer: Sealer;

  constructor(
    instanceSecret: string,
    private readonly now: () => number,
    /** The passkeys domain: its credentials go with the second factors. */
    private readonly passkeys?: Pick<PasskeyCeremonies, 'removeAllIn'> | undefined,
  ) {
    this.sealer = new Sealer(instanceSecret, 'mfa-secrets');
  }

  /** Removes every second factor and passkey of the user in the caller's transaction (reset; an address proven for the first time). */
  async removeAllIn(tx: Transaction<Database>, environment: Environment, userId: string): Promise<void> {
    const hadTotp = await q.deleteTotp(tx, environment.id, userId);
    const hadCodes = (await q.countUnusedBackupCodes(tx, environment.id, userId)) > 0;
    await q.deleteBackupCodes(tx, environment.id, userId);
    const hadPasskeys = (await this.passkeys?.removeAllIn(tx, environment, userId)) ?? false;
    if (hadTotp || hadCodes || hadPasskeys) await q.secondFactorsChanged(tx, environment.id, userId, this.now());
  }

  /**
   * After a passkey was added or removed, in its transaction: the user's summary flag and
   * `user.updated`; with no second factor left (no TOTP, no passkey), the backup codes go too.
   */
  async passkeysChangedIn(tx: Transaction<Database>, environment: Environment, userId: string): Promise<void> {
    const totp = await q.findTotp(tx, environment.id, userId);
    if (totp?.secret == null && (await q.countPasskeys(tx, environment.id, userId)) === 0) {
      await q.deleteBackupCodes(tx, environment.id, userId);
    }
    await q.secondFactorsChanged(tx, environment.id, userId, this.now());
  }

  /** An imported TOTP secret (base32, checked by identity), enabled at once; no backup codes are made. */
  async storeImportedTotp(tx: Transaction<Database>, environment: Environment, userId: string, totpSecret: string): Promise<void> {
    const secret = base32Decode(totpSecret);
    if (!secret) throw apiError('invalid_request', 'totpSecret is not base32.', { fields: ['totpSecret'] });
    await q.putEnabledTotp(tx, environment.id, userId, this.sealer.seal(totpBinding(environment, userId), secret), this.now());
  }
}
