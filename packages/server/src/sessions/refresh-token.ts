import { createHmac } from 'node:crypto';
import { constantTimeEqual, randomText } from '../lib/crypto.js';
import { deriveSubkey } from '../lib/cursor.js';

/**
 * Refresh tokens: `rt_{session}.{generation}.{secret}.{mac}`.
 *
 * - `secret` is 128 bits. The first token of a session takes it from the CSPRNG; each successor takes
 *   it from HMAC(successor key, previous token), so presenting the same token twice inside the grace
 *   window yields the same successor without storing any token.
 * - `mac` is an HMAC over the environment, session, generation and secret. It proves the token was
 *   issued by this instance for this environment, so a token of an older generation can be
 *   recognized as genuine (reuse: revoke the session) without keeping every hash, and nobody can
 *   revoke someone else's session by inventing a token from a session id.
 * - Only sha256(token) is stored, so a database leak alone does not yield usable tokens.
 */

const PREFIX = 'rt_';
const FORMAT = /^rt_([0-9a-z]{26})\.(0|[1-9][0-9]{0,8})\.([A-Za-z0-9_-]{22})\.([A-Za-z0-9_-]{22})$/;
const SESSION_PREFIX = 'sess_';

export interface ParsedRefreshToken {
  sessionId: string;
  generation: number;
}

export class RefreshTokens {
  private readonly macKey: Buffer;
  private readonly successorKey: Buffer;

  constructor(instanceSecret: string) {
    this.macKey = deriveSubkey(instanceSecret, 'refresh-token-mac');
    this.successorKey = deriveSubkey(instanceSecret, 'refresh-token-successor');
  }

  private mac(environmentId: string, sessionId: string, generation: number, secret: string): string {
    return createHmac('sha256', this.macKey)
      .update(`${environmentId}|${sessionId}|${generation}|${secret}`)
      .digest()
      .subarray(0, 16)
      .toString('base64url');
  }

  private build(environmentId: string, sessionId: string, generation: number, secret: string): string {
    const suffix = sessionId.slice(SESSION_PREFIX.length);
    return `${PREFIX}${suffix}.${generation}.${secret}.${this.mac(environmentId, sessionId, generation, secret)}`;
  }

  /** The first refresh token of a new session. */
  first(environmentId: string, sessionId: string): string {
    return this.build(environmentId, sessionId, 0, randomText(16));
  }

  /** The token that replaces `token`: always the same value for the same token. */
  successor(environmentId: string, token: string, parsed: ParsedRefreshToken): string {
    const secret = createHmac('sha256', this.successorKey).update(token).digest().subarray(0, 16).toString('base64url');
    return this.build(environmentId, parsed.sessionId, parsed.generation + 1, secret);
  }

  /** The session and generation of a token this instance issued for this environment, or null. */
  parse(environmentId: string, token: string): ParsedRefreshToken | null {
    const match = FORMAT.exec(token);
    if (!match) return null;
    const sessionId = `${SESSION_PREFIX}${match[1]!}`;
    const generation = Number(match[2]);
    if (!constantTimeEqual(match[4]!, this.mac(environmentId, sessionId, generation, match[3]!))) return null;
    return { sessionId, generation };
  }
}
