import type { Store } from '../db/index.js';
import { inTransaction } from '../db/changes.js';
import type { FlowTokensTable } from '../db/schema.js';
import { emailKey, normalizeEmail } from '../identity/email.js';
import type { IdentityService } from '../identity/service.js';
import { newId, newSecret, sha256Hex } from '../lib/crypto.js';
import { apiError } from '../lib/errors.js';
import type { Mail, MailContent } from '../mail/mail.js';
import type { EmailKind } from '../mail/templates.js';
import { linkWithToken, validateRedirectUrl } from '../tenancy/redirect.js';
import type { Environment, EnvironmentSettings } from '../tenancy/settings.js';
import * as q from './queries.js';

export const FLOW_TTL_MS = 10 * 60_000;
export const MAX_CODE_ATTEMPTS = 5;

export const INVALID_LINK = 'This link is invalid, expired or already used. Request a new one.';

const METHOD_NAMES: Record<keyof EnvironmentSettings['authMethods'], string> = {
  password: 'Password authentication (and so password reset)',
  magicLink: 'Magic-link sign-in',
  emailCode: 'Email-code sign-in',
  sso: 'Single sign-on',
  passkey: 'Passkey sign-in',
};

export function requireMethod(environment: Environment, method: keyof EnvironmentSettings['authMethods']): void {
  if (!environment.settings.authMethods[method]) {
    throw apiError(
      'method_disabled',
      `${METHOD_NAMES[method]} is disabled for this environment. Enable it in the environment settings, or use another method.`,
    );
  }
}

export function requireSignUp(environment: Environment): void {
  if (!environment.settings.signUp) {
    throw apiError('method_disabled', 'Sign-up is disabled for this environment, so this link cannot create an account.');
  }
}

export function passwordFingerprint(passwordHash: string | null): string {
  return sha256Hex(passwordHash ?? 'no-password');
}

export interface EmailedSecretsOptions {
  store: Store;
  identity: Pick<IdentityService, 'findUserByEmail'>;
  mail: Mail;
  now: () => number;
}

/**
 * Magic links, email codes and reset links leave the same way: starting a flow answers the same
 * whatever the address, because every path writes one token and one email in one transaction, and
 * only the email's status differs (sent, captured, or suppressed when there is no account and no sign-up).
 */
export class EmailedSecrets {
  constructor(private readonly options: EmailedSecretsOptions) {}

  /** Writes the token and its email in one transaction; sends nothing itself. */
  async issue(
    environment: Environment,
    input: {
      purpose: FlowTokensTable['purpose'];
      email: string;
      /** The secret of the token `tokenId`: its stored hash, and what the email carries of it. */
      secret: (tokenId: string) => { hash: string; content: Pick<MailContent, 'link' | 'code'> };
      kinds: { known: EmailKind; unknown: EmailKind };
    },
  ): Promise<void> {
    const now = this.options.now();
    await inTransaction(this.options.store.db, async (tx) => {
      const user = await this.options.identity.findUserByEmail(tx, environment, input.email);
      const to = user?.email ?? input.email;
      const throttled = await this.options.mail.throttled(tx, environment, to, now);
      // A throttled request sends nothing, so it must not void the code the person already has:
      // otherwise anyone could keep a victim's emailed code dead. Its own token is born consumed.
      const key = emailKey(input.email);
      if (input.purpose === 'email_code' && !throttled) await q.voidLiveCodes(tx, environment.id, key, now);
      const id = newId('flow', environment.id);
      const secret = input.secret(id);
      await q.insertFlowToken(tx, environment.id, {
        id,
        purpose: input.purpose,
        email: input.email,
        email_key: key,
        user_id: user?.id ?? null,
        secret_hash: secret.hash,
        password_fingerprint: user && input.purpose === 'password_reset' ? passwordFingerprint(user.password_hash) : null,
        created_at: now,
        expires_at: now + FLOW_TTL_MS,
        consumed_at: throttled ? now : null,
      });
      const kind = user ? input.kinds.known : input.kinds.unknown;
      const content = { ...secret.content, expiresInMinutes: FLOW_TTL_MS / 60_000 };
      await this.options.mail.send(tx, environment, kind, to, content, {
        now,
        deliver: user !== undefined || environment.settings.signUp,
        throttled,
      });
    });
  }

  /** Magic links and reset links: a 256-bit token, stored hashed, emailed inside the redirect URL. */
  async startLinkFlow(
    environment: Environment,
    input: { email: string; redirectUrl: string },
    purpose: 'magic_link' | 'password_reset',
    kinds: { known: EmailKind; unknown: EmailKind },
  ): Promise<void> {
    const email = normalizeEmail(input.email);
    const redirect = validateRedirectUrl(environment, input.redirectUrl);
    const secret = newSecret('', 32);
    await this.issue(environment, {
      purpose,
      email,
      secret: () => ({ hash: sha256Hex(secret), content: { link: linkWithToken(redirect, secret) } }),
      kinds,
    });
  }
}
