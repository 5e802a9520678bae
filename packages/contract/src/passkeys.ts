import { Type, type Static } from 'typebox';
import { Id } from './fields.js';
import { define } from './registry.js';

/** A passkey as its owner and the operators see it (never its key or credential id). */
export const Passkey = define(
  'Passkey',
  Type.Object({
    id: Type.String({ description: 'passkey_…' }),
    name: Type.String(),
    createdAt: Type.Integer(),
    lastUsedAt: Type.Union([Type.Integer(), Type.Null()], { description: 'When it last signed in or verified (ms); null before its first use' }),
    backedUp: Type.Boolean({ description: 'Whether the authenticator says it is synced (a multi-device passkey)' }),
  }),
);
export type Passkey = Static<typeof Passkey>;

export const PasskeyList = define('PasskeyList', Type.Object({ data: Type.Array(Passkey) }));
export type PasskeyList = Static<typeof PasskeyList>;

export const PasskeyName = Type.String({ minLength: 1, maxLength: 100 });

const B64 = (max: number) => Type.String({ maxLength: max, pattern: '^[A-Za-z0-9_-]*={0,2}$' });

/**
 * What `navigator.credentials.create()` / `.get()` answered, in its JSON form
 * (`PublicKeyCredential.toJSON()`): binary fields base64url.
 */
export const PasskeyResponse = define(
  'PasskeyResponse',
  Type.Object(
    {
      id: B64(1400),
      rawId: B64(1400),
      type: Type.Literal('public-key'),
      authenticatorAttachment: Type.Optional(Type.Union([Type.String({ maxLength: 32 }), Type.Null()])),
      clientExtensionResults: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
      response: Type.Object(
        {
          clientDataJSON: B64(8192),
          attestationObject: Type.Optional(B64(65536)),
          authenticatorData: Type.Optional(B64(8192)),
          signature: Type.Optional(B64(2048)),
          userHandle: Type.Optional(Type.Union([B64(128), Type.Null()])),
          transports: Type.Optional(Type.Array(Type.String({ maxLength: 32 }), { maxItems: 16 })),
        },
        { additionalProperties: true },
      ),
    },
    { additionalProperties: true },
  ),
);
export type PasskeyResponse = Static<typeof PasskeyResponse>;

/** The JSON form of PublicKeyCredentialCreationOptions / RequestOptions (binary fields base64url). */
export const PasskeyOptions = Type.Record(Type.String(), Type.Unknown(), {
  description: 'PublicKeyCredentialCreationOptionsJSON or PublicKeyCredentialRequestOptionsJSON (binary fields base64url)',
});

export const PasskeyOptionsAnswer = define('PasskeyOptionsAnswer', Type.Object({ options: PasskeyOptions }));
export type PasskeyOptionsAnswer = Static<typeof PasskeyOptionsAnswer>;

/** POST /v1/auth/passkey/options */
export const PasskeySignInOptions = define('PasskeySignInOptions', Type.Object({ attemptId: Type.String(), options: PasskeyOptions }));
export type PasskeySignInOptions = Static<typeof PasskeySignInOptions>;

export const PasskeySignInOptionsBody = Type.Object({ attemptId: Type.Optional(Id) }, { additionalProperties: false });
export type PasskeySignInOptionsBody = Static<typeof PasskeySignInOptionsBody>;

/** POST /v1/auth/passkey/verify */
export const PasskeySignInBody = Type.Object({ attemptId: Id, response: PasskeyResponse }, { additionalProperties: false });
export type PasskeySignInBody = Static<typeof PasskeySignInBody>;

/** POST /v1/me/passkeys */
export const PasskeyCreateBody = Type.Object({ response: PasskeyResponse, name: Type.Optional(PasskeyName) }, { additionalProperties: false });
export type PasskeyCreateBody = Static<typeof PasskeyCreateBody>;

/** PATCH /v1/me/passkeys/{id} */
export const PasskeyRenameBody = Type.Object({ name: PasskeyName }, { additionalProperties: false });
export type PasskeyRenameBody = Static<typeof PasskeyRenameBody>;
