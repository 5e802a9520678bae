import type { LightMyRequestResponse } from 'fastify';
import { AssetService, type TicketRequest, type UploadTicket } from '../../src/assets/service.js';
import type { Environment } from '../../src/tenancy/settings.js';
import type { TestApp } from './app.js';
import { sha256 } from './images.js';

/** Avatars allowed, organization images refused: the default until organizations exist. */
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

export async function uploadKit(t: TestApp, environmentId = t.project.development.id): Promise<UploadKit> {
  const assets = new AssetService(t.store, t.objectStore);
  const environment = await t.tenancy.getEnvironment(environmentId);
  const local = (url: string) => {
    const parsed = new URL(url);
    return parsed.pathname + parsed.search;
  };
  return {
    assets,
    environment,
    describe: (bytes, type, size, overrides = {}) => ({
      purpose: 'user_avatar',
      contentType: type,
      contentLength: bytes.length,
      sha256: sha256(bytes),
      ...size,
      ...overrides,
    }),
    ticket: (request, env = environment) => assets.createUploadTicket(env, request, allowAvatars),
    put: (target, bytes, overrides = {}) => {
      const url = typeof target === 'string' ? target : target.uploadUrl;
      if (!url) throw new Error('the ticket has no uploadUrl');
      const lower = (h: Record<string, string | null> = {}) => Object.fromEntries(Object.entries(h).map(([k, v]) => [k.toLowerCase(), v]));
      const merged = { ...lower(typeof target === 'string' ? {} : target.uploadHeaders), ...lower(overrides) };
      const headers = Object.fromEntries(Object.entries(merged).filter((entry): entry is [string, string] => entry[1] !== null));
      return t.app.inject({ method: 'PUT', url: local(url), payload: bytes, headers });
    },
    get: (publicUrl, headers = {}) => t.app.inject({ method: 'GET', url: local(publicUrl), headers }),
  };
}
