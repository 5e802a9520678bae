import type {
  PasskeyResponse,
  SecondFactorName,
  SecondFactorNeeded,
  SecondFactorSignedIn,
  SessionTokens,
  TotpSetup,
} from '@gatehouse/contract';
import type { Core, GatehouseState } from './core.js';
import { GatehouseError } from './errors.js';

/**
 * Where a sign-in stands once its first factor succeeded (Clerk's `signIn.status`): `complete`
 * (signed in), `needs_second_factor` (call `signIn.secondFactor({factor, code})` with one of
 * `factors`), or `needs_second_factor_setup` (the environment requires a second factor and the user
 * has none: `signIn.totpSetup()`, then `signIn.secondFactor({factor: "totp", code})`; or
 * `signIn.passkeySetup()`).
 */
export type SignInStatus = 'complete' | SecondFactorNeeded['status'];

/** What every call that can end signed in resolves with: the state, and where the sign-in stands. */
export type SignInState = GatehouseState & {
  status: SignInStatus;
  /** The second factors to choose from (in the order totp, backup_code, passkey); empty when complete. */
  factors: SecondFactorName[];
};

/** `signIn.secondFactor()`'s answer: signed in; `backupCodes` (show them once) when the step enabled TOTP. */
export type SecondFactorResult = SignInState & { backupCodes: string[] | null };

export type { SecondFactorName, TotpSetup };

/** The WebAuthn ceremonies of an attempt (passkeys.ts): the browser's answer, for the step to check. */
export interface AttemptPasskeys {
  assertForAttempt(attemptId: string): Promise<PasskeyResponse>;
  registerForAttempt(attemptId: string): Promise<PasskeyResponse>;
}

/** How the step ends: signed in now, or (`activate: false`) held until activate(). */
type Activation = {
  attemptId?: string;
  /** false: keep the new session until `activate()` (e.g. to show backup codes before the signed-in page takes over). */
  activate?: boolean;
};

/** The pending attempt of this client's last sign-in, and the calls that complete it. */
export function createSecondFactorFlows(core: Core, passkeys: AttemptPasskeys) {
  let pending: { attemptId: string; status: SecondFactorNeeded['status'] } | undefined;
  /** A completed sign-in's session, kept back until activate(). */
  let held: SessionTokens | undefined;
  /**
   * The TOTP setup request in flight, by attempt. Each request replaces the pending secret on the
   * server, so two at once (a component mounted twice: React's StrictMode runs effects twice in
   * development) could show the secret that lost the race, and the code typed from it would fail.
   * Only the request in flight is shared: once answered, a new call asks again (the server may have
   * replaced the secret since, e.g. through POST /v1/me/mfa/totp).
   */
  let totpSetup: { attemptId: string; secret: Promise<TotpSetup> } | undefined;

  const attempt = (attemptId?: string): string => {
    const id = attemptId ?? pending?.attemptId;
    if (!id) {
      const message = 'No sign-in is waiting for a second factor: sign in first (its status is then "needs_second_factor").';
      throw new GatehouseError({ status: 0, code: 'invalid_request', message });
    }
    return id;
  };

  async function finish(call: Promise<SecondFactorSignedIn>, params: Activation): Promise<SecondFactorResult> {
    const done = await call;
    pending = undefined;
    const backupCodes = done.backupCodes ?? null;
    if (params.activate === false) {
      held = done.session;
      return { ...core.state(), status: 'complete', factors: [], backupCodes };
    }
    return { ...(await core.establish(done.session)), status: 'complete', factors: [], backupCodes };
  }

  return {
    /** A way in's answer: signs this client in, or remembers the attempt and says which factor comes next. */
    async settle(answer: { session: SessionTokens } | SecondFactorNeeded): Promise<SignInState> {
      if ('attemptId' in answer) {
        pending = { attemptId: answer.attemptId, status: answer.status };
        return { ...core.state(), status: answer.status, factors: answer.factors };
      }
      pending = undefined;
      return { ...(await core.establish(answer.session)), status: 'complete', factors: [] };
    },

    /** The attempt waiting for its second factor, if any (e.g. to hand it to another component). */
    pending: () => (pending ? { ...pending } : null),

    /**
     * Completes the pending sign-in with a TOTP code, a backup code, or a passkey
     * (`{factor: "passkey"}`: the browser's passkey dialog runs here; on a setup attempt it makes a
     * new passkey, as passkeySetup()). A wrong code rejects with `invalid_credentials` (the attempt
     * survives 4 of them; after the 5th, sign in again); a cancelled dialog with a PasskeyError.
     */
    async secondFactor(
      params: ({ factor: 'totp' | 'backup_code'; code: string } | { factor: 'passkey'; code?: undefined }) & Activation,
    ): Promise<SecondFactorResult> {
      const attemptId = attempt(params.attemptId);
      if (params.factor === 'passkey') {
        const setup = pending?.attemptId === attemptId && pending.status === 'needs_second_factor_setup';
        const response = setup ? await passkeys.registerForAttempt(attemptId) : await passkeys.assertForAttempt(attemptId);
        return finish(core.call('POST /v1/auth/signin/second-factor', { body: { attemptId, factor: 'passkey', response } }), params);
      }
      return finish(
        core.call('POST /v1/auth/signin/second-factor', { body: { attemptId, factor: params.factor, code: params.code } }),
        params,
      );
    },

    /**
     * For `needs_second_factor_setup`: makes a passkey on this device (the browser's dialog), which
     * registers it and signs in. A passkey brings no backup codes.
     */
    async passkeySetup(params: Activation = {}): Promise<SecondFactorResult> {
      const attemptId = attempt(params.attemptId);
      const response = await passkeys.registerForAttempt(attemptId);
      return finish(core.call('POST /v1/auth/signin/second-factor', { body: { attemptId, factor: 'passkey', response } }), params);
    },

    /** Signs this client in with the session `secondFactor({activate: false})` kept back. */
    async activate(): Promise<SignInState> {
      const session = held;
      if (!session) {
        throw new GatehouseError({
          status: 0,
          code: 'invalid_request',
          message: 'No completed sign-in is waiting: call secondFactor() first.',
        });
      }
      held = undefined;
      return { ...(await core.establish(session)), status: 'complete', factors: [] };
    },

    /**
     * For `needs_second_factor_setup`: a new TOTP secret and its otpauth:// URL (draw it as a QR
     * code). Called again for the same attempt while the first request is in flight, it answers
     * with that request's secret: only one request replaces the secret the server keeps.
     */
    totpSetup(params: { attemptId?: string } = {}): Promise<TotpSetup> {
      const attemptId = attempt(params.attemptId);
      if (totpSetup?.attemptId === attemptId) return totpSetup.secret;
      const asked = { attemptId, secret: core.call('POST /v1/auth/signin/second-factor/totp-setup', { body: { attemptId } }) };
      totpSetup = asked;
      const answered = () => {
        if (totpSetup === asked) totpSetup = undefined;
      };
      asked.secret.then(answered, answered);
      return asked.secret;
    },
  };
}
