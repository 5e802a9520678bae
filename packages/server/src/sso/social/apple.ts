/**
 * Sign in with Apple's specifics: the client secret is an ES256 JWT the developer signs with a key
 * from their Apple Developer account; the authorization answer is POSTed (response_mode=form_post,
 * required when name or email is asked for); the name arrives once, in the form's `user` field, never
 * in the ID token; booleans in the ID token may be the strings "true" and "false".
 */
import { createPrivateKey, sign, type KeyObject } from 'node:crypto';

export const APPLE_AUDIENCE = 'https://appleid.apple.com';
/** Apple accepts up to six months; a fresh one per token request lives minutes. */
const SECRET_LIFETIME_S = 300;
/** Apple's relay addresses: real, verified mailboxes that forward to the person's own address. */
export const APPLE_RELAY_DOMAIN = 'privaterelay.appleid.com';

export class AppleKeyError extends Error {}

const TEN_CHARACTERS = /^[A-Z0-9]{10}$/;

/** The key from Apple (a .p8 file: PKCS #8 PEM of a P-256 key), checked so a mistake is a 400 when saved. */
export function appleKey(pem: string): KeyObject {
  let key: KeyObject;
  try {
    key = createPrivateKey({ key: pem, format: 'pem' });
  } catch {
    throw new AppleKeyError('privateKey must be the PEM text of the .p8 key file Apple gave you (-----BEGIN PRIVATE KEY-----…).');
  }
  if (key.asymmetricKeyType !== 'ec' || key.asymmetricKeyDetails?.namedCurve !== 'prime256v1') {
    throw new AppleKeyError('privateKey must be an ES256 (P-256) key, as Apple issues for Sign in with Apple.');
  }
  return key;
}

export function checkAppleIds(teamId: unknown, keyId: unknown): string | null {
  if (typeof teamId !== 'string' || !TEN_CHARACTERS.test(teamId)) return 'teamId must be your Apple Developer Team ID: 10 characters, capital letters and digits.';
  if (typeof keyId !== 'string' || !TEN_CHARACTERS.test(keyId)) return 'keyId must be the Key ID of your Sign in with Apple key: 10 characters, capital letters and digits.';
  return null;
}

const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

/** The client secret Apple's token endpoint expects (developer.apple.com, "Creating a client secret"). */
export function appleClientSecret(input: { teamId: string; keyId: string; clientId: string; privateKey: string; now: number }): string {
  const iat = Math.floor(input.now / 1000);
  const signingInput = `${b64({ alg: 'ES256', kid: input.keyId })}.${b64({ iss: input.teamId, iat, exp: iat + SECRET_LIFETIME_S, aud: APPLE_AUDIENCE, sub: input.clientId })}`;
  const signature = sign('sha256', Buffer.from(signingInput), { key: appleKey(input.privateKey), dsaEncoding: 'ieee-p1363' });
  return `${signingInput}.${signature.toString('base64url')}`;
}

/** Apple sends true, false, "true" or "false". */
export function appleBoolean(value: unknown): boolean {
  return value === true || value === 'true';
}

/**
 * The `user` form field of the first authorization: `{"name":{"firstName","lastName"},"email"}`.
 * It is not signed, so only the name is taken from it, never the email.
 */
export function appleUserName(raw: string | null): { firstName: string | null; lastName: string | null } {
  const none = { firstName: null, lastName: null };
  if (!raw || raw.length > 4096) return none;
  try {
    const user = JSON.parse(raw) as { name?: { firstName?: unknown; lastName?: unknown } };
    const text = (v: unknown) => (typeof v === 'string' && v.trim() ? v.trim().slice(0, 100) : null);
    return { firstName: text(user?.name?.firstName), lastName: text(user?.name?.lastName) };
  } catch {
    return none;
  }
}
