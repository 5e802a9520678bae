import type { LightMyRequestResponse } from 'fastify';
import { AssetService, type TicketRequest, type UploadTicket } from '../../src/assets/service.js';
import { ApiError, type ErrorCode } from '../../src/lib/errors.js';
import type { Environment } from '../../src/tenancy/settings.js';
import type { TestApp } from './app.js';
import { signUp } from './identity.js';
import { sha256 } from './images.js';

export interface UploadKit {
  assets: AssetService;
  environment: Environment;
  /** A ticket request describing these bytes truthfully, with overrides. */
  describe(bytes: Buffer, type: string, size: { width: number; height: number }, overrides?: Partial<TicketRequest>): TicketRequest;
  /**
   * POST /v1/me/assets/upload-url as a signed-up user of the environment (one per environment);
   * a refusal is thrown as the ApiError the API answered with.
   */
  ticket(request: TicketRequest, environment?: Environment): Promise<UploadTicket>;
  /**
   * PUTs bytes to a ticket's uploadUrl with its uploadHeaders (or to a bare URL), to the injected
   * app; `headers` override. A null header is left out.
   */
  put(target: UploadTicket | string, bytes: Buffer, headers?: Record<string, string | null>): Promise<LightMyRequestResponse>;
  get(publicUrl: string, headers?: Record<string, string>): Promise<LightMyRequestResponse>;
}

/** A ticket request describing these bytes truthfully, with overrides. */
export function describeImage(
  bytes: Buffer,
  type: string,
  size: { width: number; height: number },
  overrides: Partial<TicketRequest> = {},
): TicketRequest {
  return { purpose: 'user_avatar', contentType: type, contentLength: bytes.length, sha256: sha256(bytes), ...size, ...overrides };
}

/** The path and query of an absolute URL, for injecting it into the app. */
function local(url: string): string {
  const parsed = new URL(url);
  return parsed.pathname + parsed.search;
}

/**
 * PUTs bytes to a ticket's uploadUrl with its uploadHeaders (or to a bare URL), to the injected app
 * (the filesystem store); `overrides` replace headers, and a null one is left out.
 */
export function putToApp(
  t: TestApp,
  target: UploadTicket | string,
  bytes: Buffer,
  overrides: Record<string, string | null> = {},
): Promise<LightMyRequestResponse> {
  const url = typeof target === 'string' ? target : target.uploadUrl;
  if (!url) throw new Error('the ticket has no uploadUrl');
  const lower = (h: Record<string, string | null> = {}) => Object.fromEntries(Object.entries(h).map(([k, v]) => [k.toLowerCase(), v]));
  const merged = { ...lower(typeof target === 'string' ? {} : target.uploadHeaders), ...lower(overrides) };
  const headers = Object.fromEntries(Object.entries(merged).filter((entry): entry is [string, string] => entry[1] !== null));
  return t.app.inject({ method: 'PUT', url: local(url), payload: bytes, headers });
}

/** POST /v1/me/assets/upload-url with a session's access token. */
export function requestTicket(t: TestApp, accessToken: string, request: TicketRequest): Promise<LightMyRequestResponse> {
  return t.call({ method: 'POST', url: '/v1/me/assets/upload-url', credential: accessToken, payload: request });
}

/**
 * What a client does (filesystem store): asks for a ticket with the session and PUTs the bytes
 * when they are not stored yet. Returns the ticket; fails the test on any refusal.
 */
export async function uploadThroughApi(
  t: TestApp,
  accessToken: string,
  bytes: Buffer,
  type: string,
  size: { width: number; height: number },
  purpose: 'user_avatar' | 'organization_image' = 'user_avatar',
): Promise<UploadTicket> {
  const response = await requestTicket(t, accessToken, describeImage(bytes, type, size, { purpose }));
  if (response.statusCode !== 200) throw new Error(`ticket refused: ${response.statusCode} ${response.body}`);
  const ticket = response.json() as UploadTicket;
  if (!ticket.alreadyExists) {
    const put = await putToApp(t, ticket, bytes);
    if (put.statusCode !== 200) throw new Error(`PUT refused: ${put.statusCode} ${put.body}`);
  }
  return ticket;
}

export async function uploadKit(t: TestApp, environmentId = t.project.development.id): Promise<UploadKit> {
  const assets = new AssetService(t.store, t.objectStore);
  const environment = await t.tenancy.getEnvironment(environmentId);
  const tokens = new Map<string, Promise<string>>();
  const tokenFor = (env: Environment): Promise<string> => {
    let token = tokens.get(env.id);
    if (!token) {
      token = signUp(t, { environment: { id: env.id, publishableKey: env.publishableKey, secretKey: '' } }).then((s) => s.accessToken);
      tokens.set(env.id, token);
    }
    return token;
  };
  return {
    assets,
    environment,
    describe: describeImage,
    ticket: async (request, env = environment) => {
      const response = await requestTicket(t, await tokenFor(env), request);
      if (response.statusCode === 200) return response.json() as UploadTicket;
      const { error } = response.json() as { error: { code: ErrorCode; message: string; details?: unknown } };
      throw new ApiError(error.code, error.message, error.details);
    },
    put: (target, bytes, overrides = {}) => putToApp(t, target, bytes, overrides),
    get: (publicUrl, headers = {}) => t.app.inject({ method: 'GET', url: local(publicUrl), headers }),
  };
}
