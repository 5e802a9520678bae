import { Type, type Static } from 'typebox';
import { Password } from './fields.js';
import { PasskeyResponse } from './passkeys.js';
import { define } from './registry.js';
import { SecondFactorName } from './second-factor.js';
import { SessionTokens } from './sessions.js';
import { AuthUser } from './users.js';

/** GET /v1/me/mfa: the signed-in user's second factors. */
export const MfaStatus = define(
  'MfaStatus',
  Type.Object({
    totp: Type.Object({
      enabled: Type.Boolean(),
      createdAt: Type.Optional(Type.Integer({ description: 'When TOTP was enabled (ms since the epoch)' })),
    }),
    backupCodes: Type.Object({ remaining: Type.Integer({ description: 'Unused backup codes' }) }),
    passkeys: Type.Integer(),
  }),
);
export type MfaStatus = Static<typeof MfaStatus>;

/** POST /v1/me/mfa/totp: a pending secret, shown once, until a code confirms it. */
export const TotpSetup = define(
  'TotpSetup',
  Type.Object({
    secret: Type.String({ description: 'The secret in base32, for typing into an authenticator app' }),
    otpauthUrl: Type.String({ description: 'otpauth://totp/{issuer}:{email}?secret=…&issuer=…, for a QR code' }),
  }),
);
export type TotpSetup = Static<typeof TotpSetup>;

const BackupCodeList = Type.Array(Type.String(), { description: '10 single-use codes, shown only here' });

/** POST /v1/me/mfa/totp/verify: TOTP is on, with its backup codes. */
export const TotpEnabled = define(
  'TotpEnabled',
  Type.Object({ totp: Type.Object({ enabled: Type.Literal(true) }), backupCodes: BackupCodeList }),
);
export type TotpEnabled = Static<typeof TotpEnabled>;

/** POST /v1/me/mfa/backup-codes: the new set (the old one stops working). */
export const BackupCodes = define('BackupCodes', Type.Object({ backupCodes: BackupCodeList }));
export type BackupCodes = Static<typeof BackupCodes>;

export const TotpCode = Type.String({ minLength: 1, maxLength: 32, description: 'The 6-digit code of the authenticator app' });
export const BackupCode = Type.String({ minLength: 1, maxLength: 64, description: 'One backup code; case, "-" and spaces are ignored' });

/** POST /v1/me/mfa/totp/verify */
export const TotpVerifyBody = Type.Object({ code: TotpCode }, { additionalProperties: false });
export type TotpVerifyBody = Static<typeof TotpVerifyBody>;

/** POST /v1/me/reverify: exactly one of the fields. */
export const ReverifyBody = Type.Object(
  {
    password: Type.Optional(Password),
    code: Type.Optional(TotpCode),
    backupCode: Type.Optional(BackupCode),
    passkey: Type.Optional(PasskeyResponse),
  },
  {
    additionalProperties: false,
    description: 'Exactly one of password, code (TOTP), backupCode or passkey (after POST /v1/me/reverify/passkey-options)',
  },
);
export type ReverifyBody = Static<typeof ReverifyBody>;

/** POST /v1/me/reverify: a new access token for the session (its refresh token is unchanged). */
export const Reverified = define(
  'Reverified',
  Type.Object({
    session: Type.Object({
      accessToken: Type.String({ description: 'With the new amr and fva claims' }),
      expiresIn: Type.Integer(),
      tokenType: Type.Literal('Bearer'),
    }),
  }),
);
export type Reverified = Static<typeof Reverified>;

// ---- the second step of a sign-in

/** POST /v1/auth/signin/second-factor: `code` for totp and backup_code; `response` (a WebAuthn assertion) for passkey. */
export const SecondFactorBody = Type.Object(
  {
    attemptId: Type.String({ minLength: 1, maxLength: 128 }),
    factor: SecondFactorName,
    code: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'The TOTP code or a backup code' })),
    /** For factor "passkey": navigator.credentials.get() answering POST /v1/auth/passkey/options {attemptId}, or (a setup attempt) .create() answering …/passkey-setup. */
    response: Type.Optional(PasskeyResponse),
  },
  { additionalProperties: false },
);
export type SecondFactorBody = Static<typeof SecondFactorBody>;

/** POST /v1/auth/signin/second-factor/totp-setup */
export const AttemptBody = Type.Object({ attemptId: Type.String({ minLength: 1, maxLength: 128 }) }, { additionalProperties: false });
export type AttemptBody = Static<typeof AttemptBody>;

/** POST /v1/auth/signin/second-factor: signed in; `backupCodes` (shown once) when the step enabled TOTP. */
export const SecondFactorSignedIn = define(
  'SecondFactorSignedIn',
  Type.Object({ user: AuthUser, session: SessionTokens, backupCodes: Type.Optional(BackupCodeList) }),
);
export type SecondFactorSignedIn = Static<typeof SecondFactorSignedIn>;
