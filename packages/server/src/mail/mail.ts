import type { Transaction } from 'kysely';
import { afterCommit } from '../db/changes.js';
import type { Database, OutboxStatus } from '../db/schema.js';
import type { Environment } from '../tenancy/settings.js';
import { enqueueEmail, isThrottled } from './outbox.js';
import { renderEmail, type EmailContent, type EmailKind } from './templates.js';

/** The project's name and logo, which every email shows. */
export interface Branding {
  projectName: string;
  logoUrl: string | null;
}

/** What an email says besides its kind and branding: a link or a code, and for how long. */
export type MailContent = Omit<EmailContent, 'kind' | 'projectName' | 'logoUrl'>;

export interface SendOptions {
  now: number;
  /** False when the flow must look as if it sent something but send nothing (no account, no sign-up). Default true. */
  deliver?: boolean;
  /** When the caller already asked `throttled` in this transaction (or refused on it); else asked here. */
  throttled?: boolean;
  /** Instead of the environment's project's (the operators' emails). */
  branding?: Branding;
}

export interface MailOptions {
  /** The project's branding, read in the sending transaction. */
  branding: (db: Transaction<Database>, environment: Environment) => Promise<Branding>;
  /** Tells the outbox worker a message was committed, so it sends soon. */
  wake: () => void;
}

/**
 * Every email Gatehouse sends: rendered with the project's branding, written to the outbox in the
 * caller's transaction (it commits with the change or not at all), throttled per address, and the
 * worker woken once it commits.
 */
export class Mail {
  constructor(private readonly options: MailOptions) {}

  /** Whether the address, in any case, already had its share of email (5 in 10 minutes). */
  throttled(tx: Transaction<Database>, environment: Environment, to: string, now: number): Promise<boolean> {
    return isThrottled(tx, environment.id, to, now);
  }

  async send(
    tx: Transaction<Database>,
    environment: Environment,
    kind: EmailKind,
    to: string,
    content: MailContent,
    options: SendOptions,
  ): Promise<OutboxStatus> {
    const { now } = options;
    const branding = options.branding ?? (await this.options.branding(tx, environment));
    const throttled = options.throttled ?? (await this.throttled(tx, environment, to, now));
    const rendered = renderEmail({ kind, ...branding, ...content });
    const status = await enqueueEmail(tx, { environment, kind, to, rendered, deliver: options.deliver ?? true, throttled }, now);
    afterCommit(tx, this.options.wake);
    return status;
  }
}
