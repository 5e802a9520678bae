import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import { buildApp, type AppOptions } from '../../src/app.js';
import type { MailTransport, OutgoingMessage } from '../../src/flows/transport.js';
import { newSecret } from '../../src/lib/crypto.js';
import { TenancyService } from '../../src/tenancy/service.js';
import type { Environment } from '../../src/tenancy/settings.js';
import { openTestStore, type TestStore } from './store.js';

export const BASE_URL = 'http://gatehouse.test';

export interface TestEnvironment {
  id: string;
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
  /** A project created for the test, with both environments' keys. */
  project: TestProject;
  createProject(name?: string, domain?: string): Promise<TestProject>;
  /** Injects a request with `Authorization: Bearer <credential>` when a credential is given. */
  call(options: InjectOptions & { credential?: string }): Promise<LightMyRequestResponse>;
  setSettings(environmentId: string, patch: Parameters<TenancyService['updateSettings']>[1]): Promise<Environment>;
  close(): Promise<void>;
}

export interface TestAppOptions {
  /** The app's clock; see `testClock()`. */
  now?: () => number;
  mail?: Partial<AppOptions['mail']>;
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

/** Records what would have been delivered; tests that need a real SMTP exchange use smtp-server. */
export class RecordingTransport implements MailTransport {
  readonly name = 'recording';
  readonly sent: OutgoingMessage[] = [];
  async send(message: OutgoingMessage): Promise<void> {
    this.sent.push(message);
  }
  close(): void {}
}

export async function startTestApp(options: TestAppOptions = {}): Promise<TestApp> {
  const store = await openTestStore();
  const platformKey = newSecret('plk_');
  const instanceSecret = newSecret('', 48);
  const app = await buildApp({
    config: { baseUrl: BASE_URL },
    store,
    platformKey,
    instanceSecret,
    ...(options.now ? { now: options.now } : {}),
    mail: { transport: new RecordingTransport(), startWorker: false, ...options.mail },
  });
  await app.ready();
  const tenancy = new TenancyService(store);

  async function createProject(name = 'Test project', domain = 'example.test'): Promise<TestProject> {
    const { project, environments } = await tenancy.createProject({ name, domain });
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
      await store.close();
    },
  };
}
