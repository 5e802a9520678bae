import type { Core, GatehouseState } from './core.js';
import { GatehouseError } from './errors.js';
import { userApiKeys } from './api-keys.js';
import { createMfaFlows, reverify, type ReverifyParams } from './mfa.js';
import { createOrganizationFlows, INVITATION_MARK, type OrganizationFlows } from './organization.js';
import { createSecondFactorFlows, type SignInState } from './second-factor.js';
import { createUpload, type ImageInput } from './upload.js';
import { createPasskeyFlows, type PasskeySignInOptions, type PasskeyUserFlows } from './passkeys.js';
import type {
  ProfileUpdateBody,
  SecondFactorNeeded,
  SessionList,
  SignUpBody,
  SignUpPending,
  SignUpVerifyBody,
  TotpSetup,
} from '@gatehouse/contract';
import type {
  CreateUserOrganizationBody,
  InvitationPreview,
  OrganizationSuggestion,
  UserInvitation,
  EnvironmentInfo,
  Member,
  Page,
  PasswordChanged,
  PasswordReset,
  SignedIn,
  SignInBody,
  UserIdentity,
  UserOrganization,
} from './types.js';

/** PATCH /v1/me: omitted fields are unchanged, null clears. */
export type ProfileUpdate = ProfileUpdateBody;
/** POST /v1/auth/signup */
export type SignUpParams = SignUpBody;
/** POST /v1/auth/signup/verify; `signUpId` defaults to the last sign-up this client started. */
export type SignUpVerifyParams = Pick<SignUpVerifyBody, 'code'> & Partial<Pick<SignUpVerifyBody, 'signUpId'>>;

/**
 * What `signUp()` resolves with: the new state, plus whether the account exists yet. With the
 * environment's `emailVerification: "required"` it is `verification_required` (still signed out):
 * a 6-digit code went to the address, and `signUp.verify({code})` creates the account. With `mfa:
 * "required"` it is `needs_second_factor_setup` (the account exists, still signed out): see
 * `signIn.totpSetup()`.
 */
export type SignUpResult = GatehouseState &
  (
    | { status: 'complete'; signUpId: null; factors: [] }
    | { status: 'verification_required'; signUpId: SignUpPending['signUpId']; factors: [] }
    | { status: SecondFactorNeeded['status']; signUpId: null; factors: SecondFactorNeeded['factors'] }
  );

export { INVITATION_MARK };
export type { ImageInput };

/** Marks a redirectUrl as an SSO return, so handleRedirect() knows which exchange its token is for. */
const SSO_MARK = '__gh_sso';
/** Marks a redirectUrl as the return of a link (user.identities.link): its token completes the link. */
const LINK_MARK = '__gh_link';

function currentUrl(): URL | undefined {
  return typeof location === 'undefined' ? undefined : new URL(location.href);
}

/** Removes one-time parameters from the address bar so a reload or a shared link cannot replay them. */
function forget(url: URL, names: string[]): void {
  if (typeof history === 'undefined' || typeof location === 'undefined' || url.href !== location.href) return;
  for (const name of names) url.searchParams.delete(name);
  history.replaceState(history.state, '', url.href);
}

export function createFlows(core: Core) {
  let pendingEmail: string | undefined;
  let pendingSignUp: string | undefined;
  const passkeys = createPasskeyFlows(core);
  const attempts = createSecondFactorFlows(core, passkeys);
  /** A way in's answer: this client's session, or the second factor it waits for. */
  const signedIn = async (answer: Promise<SignedIn | SecondFactorNeeded>): Promise<SignInState> => attempts.settle(await answer);

  const upload = createUpload(core);

  const updateUser = async (changes: ProfileUpdate): Promise<GatehouseState> =>
    core.patchState({ user: await core.authed('PATCH /v1/me', { body: changes }) });

  return {
    signIn: {
      password: (params: SignInBody) => signedIn(core.call('POST /v1/auth/signin', { body: params })),
      /**
       * Signs in with a passkey; `{autofill: true}` waits for one picked in the autofill of an input
       * with `autocomplete="username webauthn"` (conditional mediation). PasskeyError when WebAuthn is
       * missing or the user cancels.
       */
      passkey: (options?: PasskeySignInOptions): Promise<GatehouseState> => passkeys.signIn(options),
      /**
       * Redeems a one-time actor token (impersonation: POST /v1/actor-tokens with the secret key):
       * the session is the user's, acted by the token's actor (`session.actor`), for at most an hour.
       */
      actorToken: (params: { token: string }) => signedIn(core.call('POST /v1/auth/actor-token', { body: { token: params.token } })),
      emailCode: {
        /** Emails a 6-digit code; the answer is the same whether or not the address has an account. */
        async start(params: { email: string }): Promise<GatehouseState> {
          await core.call('POST /v1/auth/email-code', { body: { email: params.email } });
          pendingEmail = params.email;
          return core.state();
        },
        verify(params: { code: string; email?: string }): Promise<SignInState> {
          const email = params.email ?? pendingEmail;
          if (!email) {
            const message = 'Call signIn.emailCode.start({email}) first, or pass the email to verify().';
            return Promise.reject(new GatehouseError({ status: 0, code: 'invalid_request', message }));
          }
          return signedIn(core.call('POST /v1/auth/email-code/verify', { body: { email, code: params.code } }));
        },
      },
      /** After a sign-in resolved `needs_second_factor`: a TOTP code, a backup code or (`{factor: "passkey"}`) a passkey completes it. */
      secondFactor: attempts.secondFactor,
      /** After `needs_second_factor_setup`: a TOTP secret to scan; its first code (secondFactor) enables it and signs in. */
      totpSetup: attempts.totpSetup as (params?: { attemptId?: string }) => Promise<TotpSetup>,
      /** After `needs_second_factor_setup`: a passkey made on this device registers and signs in (no backup codes). */
      passkeySetup: attempts.passkeySetup,
      /** Signs in with the session `secondFactor({activate: false})` kept back. */
      activate: attempts.activate,
      /** The sign-in waiting for a second factor, or null. */
      pendingSecondFactor: attempts.pending,
      sso: {
        /**
         * Starts single sign-on, routed by the email's domain or to `connectionId`, and sends the
         * browser to the identity provider (unless `navigate: false`). It comes back to
         * `redirectUrl`; on that page call handleRedirect().
         */
        async start(params: { email?: string; connectionId?: string; redirectUrl: string; navigate?: boolean }): Promise<{ url: string }> {
          const { navigate = true, redirectUrl, ...routing } = params;
          const back = new URL(redirectUrl);
          back.searchParams.set(SSO_MARK, '1');
          const started = await core.call('POST /v1/auth/sso/start', { body: { ...routing, redirectUrl: back.href } });
          if (navigate && typeof location !== 'undefined') location.assign(started.url);
          return started;
        },
      },
      magicLink: {
        /** Emails a link to `redirectUrl` with a `token`; on that page call handleRedirect(). */
        async start(params: { email: string; redirectUrl: string }): Promise<GatehouseState> {
          await core.call('POST /v1/auth/magic-link', { body: params });
          return core.state();
        },
      },
    },

    /**
     * Creates an account with a password and signs it in, or, when the environment requires a
     * verified email, emails a code and resolves `status: "verification_required"` (signed out):
     * then `signUp.verify({code})`. Calling signUp again sends a new code (the older one dies).
     */
    signUp: Object.assign(
      async (params: SignUpParams): Promise<SignUpResult> => {
        const answer = await core.call('POST /v1/auth/signup', { body: params });
        if ('status' in answer && answer.status === 'verification_required') {
          pendingSignUp = answer.signUpId;
          return { ...core.state(), status: 'verification_required', signUpId: answer.signUpId, factors: [] };
        }
        pendingSignUp = undefined;
        const settled = await attempts.settle(answer as SignedIn | SecondFactorNeeded);
        if (settled.status === 'complete') return { ...settled, status: 'complete', signUpId: null, factors: [] };
        return { ...settled, status: settled.status, signUpId: null };
      },
      {
        /** The emailed code of a sign-up that answered `verification_required`: creates the account, signs it in. */
        async verify(params: SignUpVerifyParams): Promise<SignInState> {
          const signUpId = params.signUpId ?? pendingSignUp;
          if (!signUpId) {
            const message = 'Call signUp({email, password}) first, or pass the signUpId it answered to verify().';
            throw new GatehouseError({ status: 0, code: 'invalid_request', message });
          }
          const state = await signedIn(core.call('POST /v1/auth/signup/verify', { body: { signUpId, code: params.code } }));
          pendingSignUp = undefined;
          return state;
        },
      },
    ),

    /**
     * On the page an emailed link, an SSO sign-in or a hosted page leads to: exchanges its `token`
     * (or the `#__gh_handoff=` fragment) for a session, or throws the `error` it carries (SSO: e.g.
     * `account_exists`). Removes them from the address bar. Without any, returns the state.
     */
    async handleRedirect(url: string | URL | undefined = currentUrl()): Promise<SignInState | GatehouseState> {
      const target = url === undefined ? undefined : new URL(url);
      // A hosted page's redirect: a one-time handoff token in the fragment (never sent to servers).
      const handoff = target ? new URLSearchParams(target.hash.slice(1)).get('__gh_handoff') : null;
      if (target && handoff) {
        if (typeof history !== 'undefined' && typeof location !== 'undefined' && target.href === location.href) {
          history.replaceState(history.state, '', target.href.split('#')[0]);
        }
        return signedIn(core.call('POST /v1/auth/handoff', { body: { token: handoff } }));
      }
      const error = target?.searchParams.get('error');
      const token = target?.searchParams.get('token');
      const sso = target?.searchParams.has(SSO_MARK) ?? false;
      if (target && error) {
        // Read before forget(), which deletes it from the same URL.
        const message = target.searchParams.get('error_description') ?? `Sign-in failed: ${error}.`;
        forget(target, ['error', 'error_description', SSO_MARK, LINK_MARK]);
        throw new GatehouseError({ status: 0, code: error as GatehouseError['code'], message });
      }
      if (!target || !token) return core.state();
      if (target.searchParams.has(LINK_MARK)) {
        // A link's return: only this user's session can complete it (it never signs anyone in).
        forget(target, ['token', LINK_MARK]);
        await core.authed('POST /v1/me/identities/complete', { body: { token } });
        return core.state();
      }
      // An invitation link (see organization.invitations.create): accepting signs in or creates the account.
      if (target.searchParams.has(INVITATION_MARK)) {
        forget(target, ['token', INVITATION_MARK]);
        return signedIn(core.call('POST /v1/auth/invitations/accept', { body: { token } }));
      }
      forget(target, sso ? ['token', SSO_MARK] : ['token']);
      return signedIn(core.call(sso ? 'POST /v1/auth/sso/verify' : 'POST /v1/auth/magic-link/verify', { body: { token } }));
    },

    signOut: () => core.signOut(),

    /** Invitations addressed to the user, and accepting them. */
    invitations: {
      /** Pending invitations to the user's email, once it is verified. */
      list: async (): Promise<UserInvitation[]> => (await core.authed('GET /v1/me/invitations')).data,
      /** Joins as the invited role while signed in; the organizations in the state are reloaded. */
      async accept(invitationId: string): Promise<Member> {
        const member = await core.authed('POST /v1/me/invitations/{invitationId}/accept', { params: { invitationId } });
        await core.loadProfile().catch(() => undefined);
        return member;
      },
      /**
       * On the page an invitation email leads to: exchanges its `token` (default: the page URL's)
       * for a session, creating the account if the address has none (`password` and names apply
       * then only). Removes the token from the address bar.
       */
      /**
       * Reads the invitation of an emailed link before accepting it (default token: the page URL's):
       * the organization's name and image, and the invited address masked (`a***@example.com`).
       * Changes nothing.
       */
      preview: (token?: string): Promise<InvitationPreview> =>
        core.call('POST /v1/auth/invitations/preview', { body: { token: token ?? currentUrl()?.searchParams.get('token') ?? '' } }),
      async acceptFromLink(
        params: { token?: string; password?: string; firstName?: string; lastName?: string } = {},
      ): Promise<SignInState> {
        const page = currentUrl();
        const { token: given, ...rest } = params;
        const token = given ?? page?.searchParams.get('token') ?? '';
        const answer = await core.call('POST /v1/auth/invitations/accept', { body: { token, ...rest } });
        // Gone from the address bar before the page hears it is signed in.
        if (page && given === undefined) forget(page, ['token', INVITATION_MARK]);
        return attempts.settle(answer);
      },
    },

    /** Organizations suggested by a verified domain at the user's address. */
    suggestions: {
      list: async (): Promise<OrganizationSuggestion[]> => (await core.authed('GET /v1/me/organization-suggestions')).data,
      /** Asks to join: files a membership request the organization's admins decide. */
      accept: (suggestionId: string): Promise<OrganizationSuggestion> =>
        core.authed('POST /v1/me/organization-suggestions/{suggestionId}/accept', { params: { suggestionId } }),
    },

    /** Acts as an organization (or none with null): new tokens whose org_* claims say so. */
    setActiveOrganization: (organizationId: string | null) => core.rotate({ organizationId }),

    passwordReset: {
      async start(params: { email: string; redirectUrl: string }): Promise<GatehouseState> {
        await core.call('POST /v1/auth/password-reset', { body: params });
        return core.state();
      },
      /** `token` defaults to the one in the page's URL. Every session of the user is revoked, this one too. */
      async complete(params: { newPassword: string; token?: string }): Promise<PasswordReset> {
        const page = currentUrl();
        const token = params.token ?? page?.searchParams.get('token') ?? '';
        const result = await core.call('POST /v1/auth/password-reset/complete', { body: { token, newPassword: params.newPassword } });
        if (page && !params.token) forget(page, ['token']);
        if (core.state().isSignedIn) await core.signOut();
        return result;
      },
    },

    /**
     * Verifies a factor again for this session ({password}, {code}, {backupCode}, or {passkey: true}:
     * the browser's passkey dialog runs here): sensitive
     * changes refused with `reverification_required` then succeed for 10 minutes. Holds the new
     * access token (its `amr` and `fva` say so).
     */
    reverify: async (params: ReverifyParams | { passkey: true }) =>
      'passkey' in params ? reverify(core, { passkey: await passkeys.assertForReverify() }) : reverify(core, params),

    // Assigned onto the second-factor calls, so that the declarations name their type.
    user: Object.assign(createMfaFlows(core), {
      /** The user's own API keys; creating one needs a recent verification. */
      apiKeys: userApiKeys(core),
      update: updateUser,
      /** The user's passkeys: create (WebAuthn on this device), list, rename, remove (reverification). */
      passkeys: passkeys.user as PasskeyUserFlows,
      /** Computes the SHA-256 and pixel size here, uploads through a ticket, and saves it as imageUrl. */
      setAvatar: async (file: ImageInput) => updateUser({ imageUrl: await upload('user_avatar', file) }),
      /** Needs the current password; every other session of the user is revoked. */
      changePassword: (params: { currentPassword: string; newPassword: string }): Promise<PasswordChanged> =>
        core.authed('POST /v1/me/password', { body: params }),
      /** The provider accounts (social and SSO connections) linked to the user. */
      identities: {
        list: async (): Promise<UserIdentity[]> => (await core.authed('GET /v1/me/identities')).data,
        /**
         * Sends the browser to the provider to link it to the signed-in user (unless `navigate:
         * false`). It comes back to `redirectUrl` with a token or an `error` (e.g. `account_exists`:
         * that provider account belongs to another user); call handleRedirect() there, signed in as
         * the same user: it completes the link.
         */
        async link(params: { connectionId: string; redirectUrl: string; navigate?: boolean }): Promise<{ url: string }> {
          const back = new URL(params.redirectUrl);
          back.searchParams.set(LINK_MARK, '1');
          const started = await core.authed('POST /v1/me/identities', {
            body: { connectionId: params.connectionId, redirectUrl: back.href },
          });
          if (params.navigate !== false && typeof location !== 'undefined') location.assign(started.url);
          return started;
        },
        /** Refused with `conflict` when it is the user's last way to sign in. */
        unlink: (identityId: string): Promise<void> => core.authed('DELETE /v1/me/identities/{identityId}', { params: { identityId } }),
      },
    }),

    /** The user's live sessions: device (`userAgent`), the factors each verified (`amr`), `current`. */
    sessions: {
      list: async (): Promise<SessionList['data']> => (await core.authed('GET /v1/me/sessions')).data,
      revoke: (sessionId: string): Promise<void> => core.authed('DELETE /v1/me/sessions/{sessionId}', { params: { sessionId } }),
    },

    organizations: {
      list: (params?: { limit?: number; cursor?: string }): Promise<Page<UserOrganization>> =>
        core.authed('GET /v1/me/organizations', { query: params ?? {} }),
      /** The signed-in user becomes its owner; switch to it with setActiveOrganization. */
      async create(params: CreateUserOrganizationBody): Promise<UserOrganization> {
        const created = await core.authed('POST /v1/me/organizations', { body: params });
        await core.loadProfile().catch(() => undefined);
        return created;
      },
    },

    /** The organization the session acts as (see setActiveOrganization). */
    // Named, so that the declarations name its type rather than spell it out.
    organization: createOrganizationFlows(core, upload) as OrganizationFlows,

    /** The environment's enabled sign-in methods and whether sign-up is open. */
    environment: (): Promise<EnvironmentInfo> => core.call('GET /v1/environment'),
  };
}

export type Flows = ReturnType<typeof createFlows>;
