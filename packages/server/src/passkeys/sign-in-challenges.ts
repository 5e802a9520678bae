import { createHmac } from 'node:crypto';
import { constantTimeEqual, randomText } from '../lib/crypto.js';
import { deriveSubkey } from '../lib/cursor.js';
import type { Environment } from '../tenancy/settings.js';

/** A discoverable sign-in's challenge, as its attempt id carries it. */
export interface SignInChallenge {
  attemptId: string;
  challenge: string;
  rpId: string;
  expiresAt: number;
}

const PREFIX = 'pka_';
const FORMAT = /^pka_([ld])([0-9a-z]{1,11})\.([A-Za-z0-9_-]{43})\.([A-Za-z0-9_-]{22})$/;

/**
 * The challenges of discoverable passkey sign-ins travel in their attempt ids instead of a table:
 * `pka_{l|d}{expiresAt, base 36}.{challenge}.{mac}`, where `l` is the RP ID "localhost" and `d`
 * the environment's domain. The challenge is 32 bytes from the CSPRNG; the MAC (HMAC-SHA-256 under
 * a key derived from the instance secret) binds it to the environment, the RP ID and the expiry, so
 * an attempt id can be neither made up nor moved to another environment, RP ID or time. The
 * options call writes nothing; the verify records the attempt as spent in the transaction that
 * starts the session (PasskeyCeremonies), which keeps each challenge single-use.
 */
export class SignInChallenges {
  private readonly key: Buffer;

  constructor(instanceSecret: string) {
    this.key = deriveSubkey(instanceSecret, 'passkey-sign-in-challenge');
  }

  private mac(environmentId: string, rpId: string, body: string): string {
    return createHmac('sha256', this.key).update(`${environmentId}|${rpId}|${body}`).digest().subarray(0, 16).toString('base64url');
  }

  issue(environment: Environment, rpId: string, expiresAt: number): SignInChallenge {
    const challenge = randomText(32);
    const body = `${rpId === 'localhost' ? 'l' : 'd'}${expiresAt.toString(36)}.${challenge}`;
    return { attemptId: `${PREFIX}${body}.${this.mac(environment.id, rpId, body)}`, challenge, rpId, expiresAt };
  }

  /** The challenge of an attempt id issued for this environment and still live; undefined otherwise. */
  open(environment: Environment, attemptId: string, now: number): SignInChallenge | undefined {
    const match = FORMAT.exec(attemptId);
    if (!match) return undefined;
    const [, kind, expiry, challenge, mac] = match as unknown as [string, 'l' | 'd', string, string, string];
    // The RP ID the options call chose: localhost, or the domain the environment has now (a domain
    // changed since then fails the MAC, as the stored RP ID would have failed the origin check).
    const rpId = kind === 'l' ? 'localhost' : environment.settings.domain?.toLowerCase();
    if (!rpId || (kind === 'd' && rpId === 'localhost')) return undefined;
    const body = attemptId.slice(PREFIX.length, attemptId.lastIndexOf('.'));
    if (!constantTimeEqual(mac, this.mac(environment.id, rpId, body))) return undefined;
    const expiresAt = parseInt(expiry, 36);
    if (!(expiresAt > now)) return undefined;
    return { attemptId, challenge, rpId, expiresAt };
  }
}
