/**
 * The claims of a Gatehouse access token. The `org_*` claims are present while the session acts as
 * an organization; they are a snapshot taken when the token was issued.
 */
export interface GatehouseClaims {
  /** `{baseUrl}/v1/environments/{environmentId}` */
  iss: string;
  /** The user id, `user_…` */
  sub: string;
  /** The session id */
  sid: string;
  iat: number;
  nbf: number;
  exp: number;
  jti: string;
  /** The Origin of the request that got the token, when there was one. */
  azp?: string;
  org_id?: string;
  org_slug?: string;
  org_role?: string;
  org_permissions?: string[];
  /** The factors this session verified, in order: `pwd`, `email`, `sso`, `passkey`, `totp`, `backup_code`, `actor`. */
  amr?: string[];
  /** Minutes since the session last verified a first and a second factor; -1 when never (Clerk's `fva`). */
  fva?: [number, number];
  /** Present when the session is impersonated: who acts (RFC 8693 §4.1). */
  act?: ActorClaim;
  [claim: string]: unknown;
}

/** Who acts in an impersonated session: an operator's user id or a label such as `support:ada`. */
export interface ActorClaim {
  sub: string;
}

/** The claims of a machine's token (client credentials; header `typ: "m2m+jwt"`). There is no session. */
export interface MachineClaims {
  /** `{baseUrl}/v1/environments/{environmentId}` */
  iss: string;
  /** The machine id, `mch_…` */
  sub: string;
  client_id?: string;
  /** The granted scopes, space-separated */
  scope: string;
  iat: number;
  nbf: number;
  exp: number;
  jti: string;
  [claim: string]: unknown;
}
