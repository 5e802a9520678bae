import type { EnvironmentId } from '../../src/lib/ids.js';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import { buildApp, type AppOptions } from '../../src/app.js';
import type { MailTransport, OutgoingMessage } from '../../src/mail/transport.js';
import { FilesystemObjectStore } from '../../src/assets/filesystem-store.js';
import type { ObjectStore } from '../../src/assets/object-store.js';
import { deriveSubkey } from '../../src/lib/cursor.js';
import { newSecret } from '../../src/lib/crypto.js';
import { TenancyService } from '../../src/tenancy/service.js';
import type { Environment } from '../../src/tenancy/settings.js';
import { openTestStore, type TestStore } from './store.js';

export const BASE_URL = 'http://gatehouse.test';

export interface TestEnvironment {
  id: EnvironmentId;
  publishableKey: string;
  secretKey: string;
}

export interface TestProject {
  id: string;
  development: TestEnvironment;
  production: TestEnvironment;
}

export interface TestApp {
  app: FastifyInstance;
  store: TestStore;
  tenancy: TenancyService;
  platformKey: string;
  instanceSecret: string;
  objectStore: ObjectStore;
  /** A project created for the test, with both environments' keys. */
  project: TestProject;
  createProject(name?: string, domain?: string): Promise<TestProject>;
  /** Injects a request with `Authorization: Bearer <credential>` when a credential is given. */
  call(options: InjectOptions & { credential?: string }): Promise<LightMyRequestResponse>;
  setSettings(environmentId: string, patch: Parameters<TenancyService['updateSettings']>[1]): Promise<Environment>;
  close(): Promise<void>;
}

/** Records what would have been delivered; tests that need a real SMTP exchange use smtp-server. */
export class RecordingTransport implements MailTransport {
  readonly name = 'recording';
  readonly sent: OutgoingMessage[] = [];
  async send(message: OutgoingMessage): Promise<void> {
    this.sent.push(message);
  }
  close(): void {}
}

export interface TestAppOptions extends Pick<
  AppOptions,
  'redis' | 'rateLimit' | 'cache' | 'logger' | 'throttle' | 'trustProxy' | 'webhooks' | 'sso' | 'auditRetentionDays' | 'metrics'
> {
  /** A store to use instead of a fresh one (e.g. one of openSharedTestStores()); closed with the app. */
  store?: TestStore;
  /** Shared platform key, so several apps (nodes) over one store accept the same one. */
  platformKey?: string;
  instanceSecret?: string;
  /** Extra routes registered before the app is ready, e.g. to probe hooks. */
  routes?: (app: FastifyInstance) => void;
  /** Mail delivery; by default a recording transport and a worker the test drives by hand. */
  mail?: Partial<AppOptions['mail']>;
  /** The app's clock; see `testClock()`. */
  now?: () => number;
  /** Builds the object store; by default a filesystem store in a temporary directory, removed on close. */
  objectStore?: (context: { instanceSecret: string; baseUrl: string }) => Promise<ObjectStore>;
  /**
   * The base URL of the default filesystem store's public URLs (default BASE_URL, which is plain
   * http on a non-loopback host, so its own URLs cannot be saved as an imageUrl). Requests are
   * injected, so any base reaches the app.
   */
  assetBaseUrl?: string;
  /** The server's own base URL (default BASE_URL): a server a real browser reaches sets its loopback URL. */
  baseUrl?: string;
}

/** A clock tests move by hand, for time-dependent rules, instead of sleeping. */
export function testClock(start = Date.now()) {
  let time = start;
  return {
    now: () => time,
    advance(ms: number) {
      time += ms;
    },
    set(ms: number) {
      time = ms;
    },
  };
}

/** A filesystem object store in a fresh temporary directory; `root` is removed by the caller. */
export async function temporaryFilesystemStore(instanceSecret: string, options: { baseUrl?: string; now?: () => number } = {}) {
  const root = await mkdtemp(path.join(os.tmpdir(), 'gatehouse-objects-'));
  const objects = await FilesystemObjectStore.open({
    root,
    baseUrl: options.baseUrl ?? BASE_URL,
    signingKey: deriveSubkey(instanceSecret, 'uploads'),
    ...(options.now ? { now: options.now } : {}),
  });
  return { root, objects };
}

export async function startTestApp(options: TestAppOptions = {}): Promise<TestApp> {
  const {
    store: givenStore,
    platformKey: givenPlatformKey,
    instanceSecret: givenSecret,
    routes,
    mail,
    objectStore: makeObjectStore,
    assetBaseUrl,
    baseUrl,
    ...appOptions
  } = options;
  const store = givenStore ?? (await openTestStore());
  const platformKey = givenPlatformKey ?? newSecret('plk_');
  const instanceSecret = givenSecret ?? newSecret('', 48);
  let objectsRoot: string | undefined;
  let objectStore: ObjectStore;
  if (makeObjectStore) {
    objectStore = await makeObjectStore({ instanceSecret, baseUrl: BASE_URL });
  } else {
    const created = await temporaryFilesystemStore(instanceSecret, assetBaseUrl ? { baseUrl: assetBaseUrl } : {});
    objectsRoot = created.root;
    objectStore = created.objects;
  }
  const app = await buildApp({
    config: { baseUrl: baseUrl ?? BASE_URL },
    store,
    platformKey,
    instanceSecret,
    objectStore,
    ...appOptions,
    mail: { transport: new RecordingTransport(), startWorker: false, ...mail },
    webhooks: { startWorker: false, ...appOptions.webhooks },
  });
  routes?.(app);
  await app.ready();
  // The app's own service: its writes invalidate the app's cache like the API's do.
  const tenancy: TenancyService = app.tenancy;

  async function createProject(name = 'Test project', domain = 'example.test'): Promise<TestProject> {
    const { project, environments } = await tenancy.createProject({ name, domain });
    // Most suites sign up with a password and use the session at once; the verified sign-up suites
    // (test/auth/signup-verification*.test.ts) turn verification back on.
    for (const e of environments) await tenancy.updateSettings(e.environment.id, { emailVerification: 'off' });
    const pick = (type: 'development' | 'production'): TestEnvironment => {
      const e = environments.find((x) => x.environment.type === type)!;
      return { id: e.environment.id, publishableKey: e.environment.publishableKey, secretKey: e.secretKey };
    };
    return { id: project.id, development: pick('development'), production: pick('production') };
  }

  return {
    app,
    store,
    tenancy,
    platformKey,
    instanceSecret,
    objectStore,
    project: await createProject(),
    createProject,
    call({ credential, headers, ...rest }) {
      return app.inject({
        ...rest,
        headers: { ...(credential === undefined ? {} : { authorization: `Bearer ${credential}` }), ...headers },
      });
    },
    setSettings: (environmentId, patch) => tenancy.updateSettings(environmentId, patch),
    async close() {
      await app.close();
      await objectStore.close();
      await store.close();
      if (objectsRoot) await rm(objectsRoot, { recursive: true, force: true });
    },
  };
}
