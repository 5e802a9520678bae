import type { MachineToken } from '@gatehouse/contract';

export interface MachineTokenOptions {
  /** The Gatehouse server root, e.g. `https://auth.example.com` (no `/v1`). */
  baseUrl: string;
  /** The machine id, `mch_…`. */
  clientId: string;
  /** `gh_mch_…`. Server side only. */
  clientSecret: string;
  /** Some of the machine's scopes, space-separated; all of them when omitted. */
  scope?: string;
  /** Per request, in ms; default 5000. */
  timeoutMs?: number;
}

/**
 * A token for a machine (OAuth 2.0 client credentials at `POST /v1/oauth/token`, HTTP Basic), for
 * calling your own services; they check it with `verifyToken(token, {issuer, acceptsToken: ["m2m_token"]})`.
 * Refusals throw `GatehouseMachineTokenError` with Gatehouse's error code.
 */
export async function getMachineToken(options: MachineTokenOptions): Promise<MachineToken> {
  const root = options.baseUrl.replace(/\/+$/, '');
  const body = new URLSearchParams({ grant_type: 'client_credentials', ...(options.scope !== undefined ? { scope: options.scope } : {}) });
  const basic = btoa(`${encodeURIComponent(options.clientId)}:${encodeURIComponent(options.clientSecret)}`);
  const response = await fetch(`${root}/v1/oauth/token`, {
    method: 'POST',
    headers: { authorization: `Basic ${basic}`, 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
    body: body.toString(),
    redirect: 'error',
    signal: AbortSignal.timeout(options.timeoutMs ?? 5_000),
  });
  const answer = (await response.json().catch(() => ({}))) as MachineToken & { error?: { code: string; message: string } };
  if (!response.ok) {
    throw new GatehouseMachineTokenError(
      response.status,
      answer.error?.code ?? 'internal',
      answer.error?.message ?? `Gatehouse answered ${response.status}.`,
    );
  }
  return { access_token: answer.access_token, token_type: answer.token_type, expires_in: answer.expires_in, scope: answer.scope };
}

export class GatehouseMachineTokenError extends Error {
  override readonly name = 'GatehouseMachineTokenError';
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}
