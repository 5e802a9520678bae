import { randomText } from '../lib/crypto.js';
import type { SignatureThread } from '../sessions/signature-thread.js';
import type { SigningKey, SigningKeys } from '../sessions/signing-keys.js';
import { MACHINE_TOKEN_TYPE, signInput, type AccessTokens } from '../sessions/tokens.js';
import type { Environment } from '../tenancy/settings.js';

export { MACHINE_TOKEN_TYPE };

/**
 * Machine access tokens: signed with the environment's current key like a session's access token,
 * with header `typ: "m2m+jwt"` and claims `iss`, `sub` (and `client_id`) = the machine id, `scope`,
 * `iat`, `nbf`, `exp`, `jti`. No `sid`: there is no session behind it.
 */
export class MachineTokens {
  private readonly headers = new Map<string, string>();

  constructor(
    private readonly keys: SigningKeys,
    private readonly tokens: Pick<AccessTokens, 'issuer'>,
    private readonly now: () => number,
    private readonly signatureThread?: SignatureThread,
  ) {}

  async issue(environment: Environment, machineId: string, scopes: readonly string[]): Promise<{ token: string; expiresIn: number }> {
    const key = await this.keys.signingKey(environment);
    const expiresIn = environment.settings.accessTokenTtlSeconds;
    const iat = Math.floor(this.now() / 1000);
    const claims = {
      iss: this.tokens.issuer(environment.id),
      sub: machineId,
      client_id: machineId,
      scope: scopes.join(' '),
      iat,
      nbf: iat,
      exp: iat + expiresIn,
      jti: randomText(16),
    };
    const input = `${this.header(key)}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}`;
    return { token: `${input}.${await this.signature(key, input)}`, expiresIn };
  }

  private header(key: SigningKey): string {
    let header = this.headers.get(key.kid);
    if (header === undefined) {
      header = Buffer.from(JSON.stringify({ alg: key.alg, kid: key.kid, typ: MACHINE_TOKEN_TYPE })).toString('base64url');
      if (this.headers.size >= 1000) this.headers.clear();
      this.headers.set(key.kid, header);
    }
    return header;
  }

  private async signature(key: SigningKey, input: string): Promise<string> {
    const inline = () => signInput(key.alg, Buffer.from(input), key.privateKey).toString('base64url');
    if (key.alg !== 'RS256' || !this.signatureThread) return inline();
    try {
      return await this.signatureThread.signRs256(input, key.privateKey);
    } catch {
      return inline();
    }
  }
}
