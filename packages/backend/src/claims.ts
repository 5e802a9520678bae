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
  [claim: string]: unknown;
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
