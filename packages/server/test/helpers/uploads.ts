import type { LightMyRequestResponse } from 'fastify';
import { AssetService, type TicketRequest, type UploadTicket } from '../../src/assets/service.js';
import type { Environment } from '../../src/tenancy/settings.js';
import type { TestApp } from './app.js';
import { sha256 } from './images.js';

/** The service-level tests' authorizer: avatars only (organization images are tested through HTTP). */
export const allowAvatars = async (purpose: string) => {
  if (purpose !== 'user_avatar') throw new Error(`unexpected purpose ${purpose}`);
};

export interface UploadKit {
  assets: AssetService;
  environment: Environment;
  /** A ticket request describing these bytes truthfully, with overrides. */
  describe(bytes: Buffer, type: string, size: { width: number; height: number }, overrides?: Partial<TicketRequest>): TicketRequest;
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
  return {
    assets,
    environment,
    describe: describeImage,
    ticket: (request, env = environment) => assets.createUploadTicket(env, request, allowAvatars),
    put: (target, bytes, overrides = {}) => putToApp(t, target, bytes, overrides),
    get: (publicUrl, headers = {}) => t.app.inject({ method: 'GET', url: local(publicUrl), headers }),
  };
}
