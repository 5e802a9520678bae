import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { rm } from 'node:fs/promises';
import type { FastifyInstance } from 'fastify';
import { buildApp, type AppOptions } from '../../../server/src/app.js';
import { newSecret } from '../../../server/src/lib/crypto.js';
import type { EnvironmentSettings } from '../../../server/src/tenancy/settings.js';
import { RecordingTransport, temporaryFilesystemStore } from '../../../server/test/helpers/app.js';
import { GOOD_PASSWORD, uniqueEmail } from '../../../server/test/helpers/identity.js';
import { openTestStore } from '../../../server/test/helpers/store.js';

export { GOOD_PASSWORD, uniqueEmail };

export interface Environment {
  id: string;
  publishableKey: string;
  secretKey: string;
  /** `{baseUrl}/v1/environments/{id}`: what verifyToken's `issuer` is. */
  issuer: string;
}

export interface LoggedRequest {
  method: string;
  path: string;
  status?: number;
}

export interface SignedIn {
  userId: string;
  email: string;
  accessToken: string;
  refreshToken: string;
}

export interface Gatehouse {
  baseUrl: string;
  app: FastifyInstance;
  platformKey: string;
  development: Environment;
  production: Environment;
  /** Every request that reached the server over HTTP, in order. */
  requests: LoggedRequest[];
  /** How many times the JWKS of an environment was fetched. */
  jwksFetches(environment: Environment): number;
  /** Runs after each response, e.g. to move the rate limiter's clock when it answered 429. */
  onResponse: ((request: LoggedRequest) => void) | undefined;
  /** Until set back to false, every request hangs without an answer (a JWKS server that times out). */
  hang: boolean;
  /** A new project's development environment: a fresh issuer, whose JWKS no verifier has cached. */
  newEnvironment(): Promise<Environment>;
  signUp(environment?: Environment, headers?: Record<string, string>): Promise<SignedIn>;
  switchOrganization(environment: Environment, refreshToken: string, organizationId: string | null): Promise<SignedIn>;
  rotateKeys(environment: Environment): Promise<{ kid: string }>;
  setSettings(environment: Environment, patch: Partial<EnvironmentSettings>): Promise<void>;
  jwks(environment: Environment): Promise<{ keys: Array<Record<string, unknown> & { kid: string; alg: string }> }>;
  close(): Promise<void>;
}

/**
 * A real Gatehouse server over real HTTP on a free port, whose base URL (and so token issuer) is
 * that port's address. The test's own node server sits in front of the app, so every request is
 * logged and JWKS fetches can be counted.
 */
export async function startGatehouse(options: Pick<AppOptions, 'rateLimit'> = {}): Promise<Gatehouse> {
  const server: Server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const store = await openTestStore();
  const platformKey = newSecret('plk_');
  const instanceSecret = newSecret('', 48);
  const { root, objects } = await temporaryFilesystemStore(instanceSecret, { baseUrl });
  const app = await buildApp({
    config: { baseUrl },
    store,
    platformKey,
    instanceSecret,
    objectStore: objects,
    mail: { transport: new RecordingTransport(), startWorker: false },
    ...options,
  });
  await app.ready();

  const hanging = new Set<ServerResponse>();
  const gatehouse: Gatehouse = {
    baseUrl,
    app,
    platformKey,
    development: undefined!,
    production: undefined!,
    requests: [],
    onResponse: undefined,
    hang: false,
    jwksFetches: (environment) =>
      gatehouse.requests.filter((r) => r.path === `/v1/environments/${environment.id}/.well-known/jwks.json`).length,
    newEnvironment: async () => (await createProject()).development,
    async signUp(environment = gatehouse.development, headers = {}) {
      const email = uniqueEmail('backend');
      const body = await call(environment.publishableKey, 'POST', '/v1/auth/signup', { email, password: GOOD_PASSWORD }, headers);
      return { userId: body.user.id, email, accessToken: body.session.accessToken, refreshToken: body.session.refreshToken };
    },
    async switchOrganization(environment, refreshToken, organizationId) {
      const body = await call(environment.publishableKey, 'POST', '/v1/auth/switch-organization', { refreshToken, organizationId });
      return { userId: '', email: '', accessToken: body.session.accessToken, refreshToken: body.session.refreshToken };
    },
    // An emergency rotation: the new key signs at once, which is what these verifier tests need (a staged
    // rotation publishes the key minutes before it signs, so no verifier ever meets an unknown kid).
    rotateKeys: (environment) =>
      call(platformKey, 'POST', `/v1/platform/environments/${environment.id}/signing-keys/rotate`, { immediate: true }),
    async setSettings(environment, patch) {
      await app.tenancy.updateSettings(environment.id, patch);
      // A change of algorithm is staged like a rotation; make the new algorithm sign at once.
      if (patch.tokenAlgorithm) await gatehouse.rotateKeys(environment);
    },
    async jwks(environment) {
      const response = await fetch(`${environment.issuer}/.well-known/jwks.json`);
      return (await response.json()) as any;
    },
    async close() {
      for (const response of hanging) response.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await app.close();
      await objects.close();
      await store.close();
      await rm(root, { recursive: true, force: true });
    },
  };

  server.on('request', (request: IncomingMessage, response: ServerResponse) => {
    const entry: LoggedRequest = { method: request.method ?? 'GET', path: request.url ?? '/' };
    gatehouse.requests.push(entry);
    if (gatehouse.hang) {
      hanging.add(response);
      return;
    }
    response.on('finish', () => {
      entry.status = response.statusCode;
      gatehouse.onResponse?.(entry);
    });
    app.routing(request, response);
  });

  async function call(credential: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
    const response = await fetch(baseUrl + path, {
      method,
      headers: { authorization: `Bearer ${credential}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await response.text();
    if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${text}`);
    return text ? JSON.parse(text) : undefined;
  }

  async function createProject() {
    const { environments } = await app.tenancy.createProject({ name: 'Backend SDK tests', domain: 'example.test' });
    // The SDK's tests sign up with a password and use the session at once: no emailed code.
    for (const e of environments) await app.tenancy.updateSettings(e.environment.id, { emailVerification: 'off' });
    const pick = (type: 'development' | 'production'): Environment => {
      const e = environments.find((x) => x.environment.type === type)!;
      return {
        id: e.environment.id,
        publishableKey: e.environment.publishableKey,
        secretKey: e.secretKey,
        issuer: `${baseUrl}/v1/environments/${e.environment.id}`,
      };
    };
    return { development: pick('development'), production: pick('production') };
  }
  Object.assign(gatehouse, await createProject());
  return gatehouse;
}
