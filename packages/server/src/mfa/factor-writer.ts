import type { Transaction } from 'kysely';
import type { Database } from '../db/schema.js';
import { apiError } from '../lib/errors.js';
import { Sealer } from '../lib/sealing.js';
import type { Environment } from '../tenancy/settings.js';
import { deleteAllPasskeys } from '../passkeys/queries.js';
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
  ) {
    this.sealer = new Sealer(instanceSecret, 'mfa-secrets');
  }

  /** Removes every second factor and passkey of the user in the caller's transaction (reset; an address proven for the first time). */
  async removeAllIn(tx: Transaction<Database>, environment: Environment, userId: string): Promise<void> {
    const hadTotp = await q.deleteTotp(tx, environment.id, userId);
    const hadCodes = (await q.countUnusedBackupCodes(tx, environment.id, userId)) > 0;
    await q.deleteBackupCodes(tx, environment.id, userId);
    const hadPasskeys = await deleteAllPasskeys(tx, environment.id, userId);
    if (hadTotp || hadCodes || hadPasskeys) await q.secondFactorsChanged(tx, environment.id, userId, this.now());
  }

  /** An imported TOTP secret (base32, checked by identity), enabled at once; no backup codes are made. */
  async storeImportedTotp(tx: Transaction<Database>, environment: Environment, userId: string, totpSecret: string): Promise<void> {
    const secret = base32Decode(totpSecret);
    if (!secret) throw apiError('invalid_request', 'totpSecret is not base32.', { fields: ['totpSecret'] });
    await q.putEnabledTotp(tx, environment.id, userId, this.sealer.seal(totpBinding(environment, userId), secret), this.now());
  }
}
