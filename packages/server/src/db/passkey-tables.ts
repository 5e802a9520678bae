import type { EnvironmentId } from '../lib/ids.js';

/** Passkeys (0035, docs/passkeys.md). */
export interface PasskeysTable {
  environment_id: EnvironmentId;
  /** passkey_… */
  id: string;
  user_id: string;
  /** base64url, unique per environment */
  credential_id: string;
  /** base64url COSE key */
  public_key: string;
  counter: number;
  /** JSON array */
  transports: string;
  backed_up: number;
  name: string;
  created_at: number;
  last_used_at: number | null;
}

export interface PasskeyUserHandlesTable {
  environment_id: EnvironmentId;
  user_id: string;
  /** base64url of 32 random bytes */
  handle: string;
}

export interface PasskeyChallengesTable {
  environment_id: EnvironmentId;
  attempt_id: string;
  /** `spent`: a discoverable sign-in's challenge (carried in its attempt id) that has been answered. */
  purpose: 'registration' | 'authentication' | 'spent';
  user_id: string | null;
  /** base64url */
  challenge: string;
  rp_id: string;
  created_at: number;
  expires_at: number;
}
