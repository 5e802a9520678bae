import type { Passkey, PasskeyResponse } from '@gatehouse/contract';
import type { Core, GatehouseState } from './core.js';
import { GatehouseError } from './errors.js';

/**
 * Passkeys through the platform's WebAuthn API (no dependency): the server's options in their JSON
 * form become the binary form `navigator.credentials` takes, and its answer goes back as JSON
 * (`PublicKeyCredential.toJSON()`), base64url for every binary field.
 */

/** Why a passkey ceremony did not finish in the browser (a server refusal is a plain GatehouseError). */
export type PasskeyFailure = 'unsupported' | 'cancelled' | 'failed';

/** A passkey ceremony the browser did not finish: `reason` says whether WebAuthn is missing or the user cancelled. */
export class PasskeyError extends GatehouseError {
  readonly reason: PasskeyFailure;
  constructor(reason: PasskeyFailure, message: string) {
    super({ status: 0, code: reason === 'unsupported' ? 'method_disabled' : 'invalid_request', message });
    this.reason = reason;
  }
}

export function toBase64url(bytes: ArrayBuffer | ArrayBufferView): string {
  const view = bytes instanceof ArrayBuffer ? new Uint8Array(bytes) : new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let binary = '';
  for (const byte of view) binary += String.fromCharCode(byte);
  return btoa(binary).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

export function fromBase64url(text: string): Uint8Array<ArrayBuffer> {
  const base64 = text.replace(/-/g, '+').replace(/_/g, '/');
  const binary = atob(base64 + '='.repeat((4 - (base64.length % 4)) % 4));
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

type Json = Record<string, any>;

function credentialDescriptors(list: Json[] | undefined): PublicKeyCredentialDescriptor[] | undefined {
  return list?.map((c) => ({ ...c, type: 'public-key', id: fromBase64url(c.id) }) as PublicKeyCredentialDescriptor);
}

/** PublicKeyCredentialCreationOptionsJSON → the binary form. */
export function creationOptions(json: Json): PublicKeyCredentialCreationOptions {
  const excludeCredentials = credentialDescriptors(json.excludeCredentials);
  return {
    ...(json as PublicKeyCredentialCreationOptions),
    challenge: fromBase64url(json.challenge),
    user: { ...json.user, id: fromBase64url(json.user.id) },
    ...(excludeCredentials ? { excludeCredentials } : {}),
  };
}

/** PublicKeyCredentialRequestOptionsJSON → the binary form. */
export function requestOptions(json: Json): PublicKeyCredentialRequestOptions {
  const allowCredentials = credentialDescriptors(json.allowCredentials);
  return { ...(json as PublicKeyCredentialRequestOptions), challenge: fromBase64url(json.challenge), ...(allowCredentials ? { allowCredentials } : {}) };
}

/** A PublicKeyCredential as the JSON the server takes. */
export function credentialJson(credential: PublicKeyCredential): PasskeyResponse {
  const response = credential.response as AuthenticatorAttestationResponse & AuthenticatorAssertionResponse;
  const out: Json = { clientDataJSON: toBase64url(response.clientDataJSON) };
  if ('attestationObject' in response && response.attestationObject) {
    out.attestationObject = toBase64url(response.attestationObject);
    if (typeof response.getTransports === 'function') out.transports = response.getTransports();
  }
  if ('authenticatorData' in response && response.authenticatorData) {
    out.authenticatorData = toBase64url(response.authenticatorData);
    out.signature = toBase64url(response.signature);
    out.userHandle = response.userHandle ? toBase64url(response.userHandle) : null;
  }
  return {
    id: credential.id,
    rawId: toBase64url(credential.rawId),
    type: 'public-key',
    authenticatorAttachment: credential.authenticatorAttachment ?? null,
    clientExtensionResults: (credential.getClientExtensionResults?.() ?? {}) as Record<string, unknown>,
    response: out as PasskeyResponse['response'],
  };
}

function webAuthn(): CredentialsContainer {
  if (typeof navigator === 'undefined' || !navigator.credentials || typeof PublicKeyCredential === 'undefined') {
    throw new PasskeyError(
      'unsupported',
      'This browser cannot use passkeys (no WebAuthn here, or the page is not a secure context: use https, or http://localhost in development).',
    );
  }
  return navigator.credentials;
}

/** Whether this browser can use passkeys at all. */
export function passkeysSupported(): boolean {
  return typeof navigator !== 'undefined' && !!navigator.credentials && typeof PublicKeyCredential !== 'undefined';
}

/** Whether the browser offers passkeys in an input's autofill (conditional mediation). */
export async function passkeyAutofillSupported(): Promise<boolean> {
  if (!passkeysSupported()) return false;
  const check = (PublicKeyCredential as unknown as { isConditionalMediationAvailable?: () => Promise<boolean> }).isConditionalMediationAvailable;
  return typeof check === 'function' ? check.call(PublicKeyCredential).catch(() => false) : false;
}

/** The browser's refusals, said as what happened. */
function browserFailure(error: unknown): PasskeyError {
  const name = error instanceof Error || (typeof DOMException !== 'undefined' && error instanceof DOMException) ? (error as Error).name : '';
  if (name === 'NotAllowedError' || name === 'AbortError') {
    return new PasskeyError('cancelled', 'The passkey request was cancelled or timed out. Try again, or sign in another way.');
  }
  if (name === 'InvalidStateError') {
    return new PasskeyError('failed', 'This authenticator already holds a passkey for this account.');
  }
  if (name === 'NotSupportedError') return new PasskeyError('unsupported', 'This authenticator cannot make a passkey this site accepts.');
  if (name === 'SecurityError') {
    return new PasskeyError('failed', "This page's address does not match the passkeys' domain (RP ID): see docs/passkeys.md.");
  }
  return new PasskeyError('failed', `The passkey request failed: ${error instanceof Error ? error.message : String(error)}`);
}

async function run<T>(work: () => Promise<T | null>): Promise<T> {
  let result: T | null;
  try {
    result = await work();
  } catch (error) {
    throw browserFailure(error);
  }
  if (result === null) throw new PasskeyError('cancelled', 'No passkey was chosen.');
  return result;
}

export interface PasskeySignInOptions {
  /** Conditional mediation: the passkeys appear in the autofill of an input with `autocomplete="username webauthn"`; resolves once one is chosen. */
  autofill?: boolean;
  /** Stops a pending request (an autofill request waits until the user picks a passkey). */
  signal?: AbortSignal;
}

export function createPasskeyFlows(core: Core) {
  // WebAuthn allows one pending request per page: a new one aborts a waiting autofill.
  let pending: AbortController | undefined;

  function begin(signal: AbortSignal | undefined): AbortController {
    pending?.abort();
    const controller = new AbortController();
    pending = controller;
    signal?.addEventListener('abort', () => controller.abort(), { once: true });
    return controller;
  }

  return {
    /**
     * Signs in with a passkey (discoverable: the browser lists the user's passkeys for this site),
     * or, with `{autofill: true}`, waits for one chosen in an input's autofill. Throws a
     * PasskeyError when WebAuthn is missing or the user cancels.
     */
    async signIn(options: PasskeySignInOptions = {}): Promise<GatehouseState> {
      const container = webAuthn();
      if (options.autofill && !(await passkeyAutofillSupported())) {
        throw new PasskeyError('unsupported', 'This browser does not offer passkeys in autofill; use signIn.passkey() from a button.');
      }
      const controller = begin(options.signal);
      try {
        const { attemptId, options: json } = await core.call('POST /v1/auth/passkey/options', { body: {} });
        const credential = await run(
          () =>
            container.get({
              publicKey: requestOptions(json),
              signal: controller.signal,
              ...(options.autofill ? { mediation: 'conditional' as CredentialMediationRequirement } : {}),
            }) as Promise<PublicKeyCredential | null>,
        );
        const { session } = await core.call('POST /v1/auth/passkey/verify', { body: { attemptId, response: credentialJson(credential) } });
        return core.establish(session);
      } finally {
        if (pending === controller) pending = undefined;
      }
    },

    /**
     * The second step of a sign-in (the attempt's user's passkeys): options bound to the attempt,
     * then the browser's assertion, for `POST /v1/auth/signin/second-factor` to check.
     */
    async assertForAttempt(attemptId: string): Promise<PasskeyResponse> {
      const container = webAuthn();
      const controller = begin(undefined);
      try {
        const { options } = await core.call('POST /v1/auth/passkey/options', { body: { attemptId } });
        const credential = await run(
          () => container.get({ publicKey: requestOptions(options), signal: controller.signal }) as Promise<PublicKeyCredential | null>,
        );
        return credentialJson(credential);
      } finally {
        if (pending === controller) pending = undefined;
      }
    },

    /** A setup attempt (`needs_second_factor_setup`): a new passkey made on this device for the attempt's user. */
    async registerForAttempt(attemptId: string): Promise<PasskeyResponse> {
      const container = webAuthn();
      const controller = begin(undefined);
      try {
        const { options } = await core.call('POST /v1/auth/signin/second-factor/passkey-setup', { body: { attemptId } });
        const credential = await run(
          () => container.create({ publicKey: creationOptions(options), signal: controller.signal }) as Promise<PublicKeyCredential | null>,
        );
        return credentialJson(credential);
      } finally {
        if (pending === controller) pending = undefined;
      }
    },

    /** Reverification: an assertion of one of the signed-in user's passkeys, for `POST /v1/me/reverify {passkey}`. */
    async assertForReverify(): Promise<PasskeyResponse> {
      const container = webAuthn();
      const controller = begin(undefined);
      try {
        const { options } = await core.authed('POST /v1/me/reverify/passkey-options');
        const credential = await run(
          () => container.get({ publicKey: requestOptions(options), signal: controller.signal }) as Promise<PublicKeyCredential | null>,
        );
        return credentialJson(credential);
      } finally {
        if (pending === controller) pending = undefined;
      }
    },

    /** The signed-in user's passkeys. */
    user: {
      /** Registers a new passkey of this device (or a security key, or a phone) for the signed-in user. */
      async create(params: { name?: string } = {}): Promise<Passkey> {
        const container = webAuthn();
        const controller = begin(undefined);
        try {
          const { options } = await core.authed('POST /v1/me/passkeys/registration');
          const credential = await run(
            () => container.create({ publicKey: creationOptions(options), signal: controller.signal }) as Promise<PublicKeyCredential | null>,
          );
          return await core.authed('POST /v1/me/passkeys', {
            body: { response: credentialJson(credential), ...(params.name ? { name: params.name } : {}) },
          });
        } finally {
          if (pending === controller) pending = undefined;
        }
      },
      list: async (): Promise<Passkey[]> => (await core.authed('GET /v1/me/passkeys')).data,
      rename: (passkeyId: string, name: string): Promise<Passkey> =>
        core.authed('PATCH /v1/me/passkeys/{passkeyId}', { params: { passkeyId }, body: { name } }),
      /** Needs a verification within 10 minutes (`reverification_required` otherwise). */
      remove: async (passkeyId: string): Promise<void> => {
        await core.authed('DELETE /v1/me/passkeys/{passkeyId}', { params: { passkeyId } });
      },
    },
  };
}

/** `user.passkeys`: named, so the declarations name its type rather than spell it out. */
export type PasskeyUserFlows = ReturnType<typeof createPasskeyFlows>['user'];
