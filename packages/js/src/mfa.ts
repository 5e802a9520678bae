/**
 * Second factors and reverification (`gh.user.mfa`, `gh.reverify`): the calls of docs/mfa.md.
 * Sensitive calls refuse with `reverification_required` when the session verified no factor in the
 * last 10 minutes: ask the user, call `gh.reverify(...)`, and call again.
 */
import type { Core, GatehouseState } from './core.js';
import { GatehouseError } from './errors.js';
import type { PasskeyResponse } from '@gatehouse/contract';
import type { BackupCodes, MfaStatus, ReverifyBody, TotpEnabled, TotpSetup } from './types.js';

/** Exactly one factor: the password, an authenticator code, a backup code (or, with `gh.reverify`, `{passkey: true}`). */
export type ReverifyParams = { password: string } | { code: string } | { backupCode: string };

/** True for the refusal a sensitive change answers without a recent verification. */
export function isReverificationRequired(error: unknown): error is GatehouseError & { code: 'reverification_required' } {
  return error instanceof GatehouseError && error.code === 'reverification_required';
}

/** `gh.user.mfa`, and Clerk's names for the same calls on `gh.user`. */
export interface MfaFlows {
  mfa: {
    get(): Promise<MfaStatus>;
    totp: { create(): Promise<TotpSetup>; verify(code: string): Promise<TotpEnabled>; remove(): Promise<void> };
    backupCodes: { regenerate(): Promise<BackupCodes> };
  };
  createTOTP(): Promise<TotpSetup>;
  verifyTOTP(params: { code: string }): Promise<TotpEnabled>;
  disableTOTP(): Promise<void>;
  createBackupCode(): Promise<BackupCodes>;
}

export function createMfaFlows(core: Core): MfaFlows {
  const mfa: MfaFlows['mfa'] = {
    /** What the user has: `{totp: {enabled, createdAt?}, backupCodes: {remaining}, passkeys}`. */
    get: (): Promise<MfaStatus> => core.authed('GET /v1/me/mfa'),
    totp: {
      /** A new pending secret (a second call replaces it): draw `otpauthUrl` as a QR code, show `secret` as text. */
      create: (): Promise<TotpSetup> => core.authed('POST /v1/me/mfa/totp'),
      /** The first code from the app turns TOTP on; the 10 backup codes are in this answer only. */
      async verify(code: string): Promise<TotpEnabled> {
        const enabled = await core.authed('POST /v1/me/mfa/totp/verify', { body: { code } });
        await core.loadProfile().catch(() => undefined); // twoFactorEnabled
        return enabled;
      },
      /** Needs a recent verification. With no other second factor left, the backup codes go too. */
      async remove(): Promise<void> {
        await core.authed('DELETE /v1/me/mfa/totp');
        await core.loadProfile().catch(() => undefined);
      },
    },
    backupCodes: {
      /** Replaces every backup code (the old ones stop at once); needs a recent verification. */
      regenerate: (): Promise<BackupCodes> => core.authed('POST /v1/me/mfa/backup-codes'),
    },
  };
  return {
    mfa,
    /** Clerk's names for the same calls. */
    createTOTP: mfa.totp.create,
    verifyTOTP: (params: { code: string }) => mfa.totp.verify(params.code),
    disableTOTP: mfa.totp.remove,
    createBackupCode: mfa.backupCodes.regenerate,
  };
}

/**
 * Verifies a factor again for this session (`POST /v1/me/reverify`) and holds the answer's access
 * token, whose `amr` and `fva` say so; the refresh token is unchanged.
 */
export async function reverify(core: Core, params: ReverifyParams | { passkey: PasskeyResponse }): Promise<GatehouseState> {
  const keys = Object.keys(params);
  if (keys.length !== 1) {
    const message = 'Pass exactly one of {password}, {code}, {backupCode} or {passkey: true} to reverify().';
    throw new GatehouseError({ status: 0, code: 'invalid_request', message });
  }
  const { session } = await core.authed('POST /v1/me/reverify', { body: params as ReverifyBody });
  return core.replaceAccessToken(session);
}
