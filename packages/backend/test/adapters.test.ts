import type { AddressInfo } from 'node:net';
import express from 'express';
import Fastify from 'fastify';
import { Hono } from 'hono';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as expressAdapter from '../src/express.js';
import * as fastifyAdapter from '../src/fastify.js';
import * as honoAdapter from '../src/hono.js';
import {
  authenticateRequest,
  createGatehouseClient,
  requireAuthResponse,
  unauthenticatedResponse,
  type AuthenticateRequestOptions,
} from '../src/index.js';
import { startGatehouse, type Gatehouse, type SignedIn } from './helpers/gatehouse.js';

/** What every test app answers on GET /me: who is signed in, and what has() says. */
function view(auth: { isSignedIn: boolean } & Record<string, any>) {
  return {
    userId: auth.userId,
    orgId: auth.orgId,
    orgRole: auth.orgRole,
    canManage: auth.has({ permission: 'org:manage' }),
    isOwner: auth.has({ role: 'owner' }),
    isAdmin: auth.has({ role: 'admin' }),
  };
}

interface Running {
  url: string;
  close(): Promise<void>;
}

async function listen(server: import('node:http').Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

const frameworks: Record<string, (options: AuthenticateRequestOptions) => Promise<Running>> = {
  async express(options) {
    const app = express();
    app.use(expressAdapter.gatehouse(options));
    app.get('/public', (req, res) => void res.json({ signedIn: req.auth?.isSignedIn ?? null }));
    app.get('/me', expressAdapter.requireAuth(), (req, res) => {
      const auth = expressAdapter.getAuth(req);
      res.json(auth?.isSignedIn ? view(auth) : null);
    });
    const server = app.listen(0);
    const url = await new Promise<string>((resolve) =>
      server.once('listening', () => resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`)),
    );
    return { url, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
  },
  async fastify(options) {
    const app = Fastify();
    await app.register(fastifyAdapter.gatehouse, options);
    app.get('/public', async (request) => ({ signedIn: fastifyAdapter.getAuth(request).isSignedIn }));
    app.get('/me', { preHandler: fastifyAdapter.requireAuth }, async (request) => {
      const auth = fastifyAdapter.getAuth(request);
      return auth.isSignedIn ? view(auth) : null;
    });
    const url = await app.listen({ port: 0, host: '127.0.0.1' });
    return { url, close: () => app.close() };
  },
  async hono(options) {
    const app = new Hono<honoAdapter.GatehouseEnv>();
    app.use(honoAdapter.gatehouse(options));
    app.get('/public', (c) => c.json({ signedIn: c.get('auth').isSignedIn }));
    app.get('/me', honoAdapter.requireAuth(), (c) => {
      const auth = c.get('auth');
      return c.json(auth.isSignedIn ? view(auth) : null);
    });
    // Hono on node's own HTTP server, through the fetch Request it builds per request.
    const { createServer } = await import('node:http');
    const server = createServer(async (req, res) => {
      const headers = new Headers();
      for (const [name, value] of Object.entries(req.headers)) if (typeof value === 'string') headers.set(name, value);
      const response = await app.fetch(new Request(`http://localhost${req.url}`, { method: req.method ?? 'GET', headers }));
      const out: Record<string, string> = {};
      response.headers.forEach((value, name) => {
        out[name] = value;
      });
      res.writeHead(response.status, out);
      res.end(Buffer.from(await response.arrayBuffer()));
    });
    const url = await listen(server);
    return { url, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
  },
  // Next.js route handlers take a fetch Request and return a Response: authenticateRequest directly.
  async 'next.js route handler'(options) {
    async function GET(request: Request): Promise<Response> {
      const auth = await authenticateRequest(request, options);
      if (new URL(request.url).pathname === '/public') return Response.json({ signedIn: auth.isSignedIn });
      if (!auth.isSignedIn) return unauthenticatedResponse(auth);
      return Response.json(view(auth));
    }
    return {
      url: 'http://next.test',
      close: async () => {},
      // Called with a Request, as Next.js calls it.
      fetch: (input: string, init?: RequestInit) => GET(new Request(input, init)),
    } as Running;
  },
  // A Next.js middleware as the README shows it: `(await requireAuthResponse(request, options)) ??
  // NextResponse.next()`, its matcher guarding /me. 'next' stands for NextResponse.next(): go on to the route.
  async 'next.js middleware'(options) {
    async function middleware(request: Request): Promise<Response | 'next'> {
      return (await requireAuthResponse(request, options)) ?? 'next';
    }
    const matcher = (request: Request) => new URL(request.url).pathname === '/me';
    async function route(request: Request): Promise<Response> {
      const auth = await authenticateRequest(request, options);
      if (new URL(request.url).pathname === '/public') return Response.json({ signedIn: auth.isSignedIn });
      // Behind the middleware: a signed-out request must never get here.
      return auth.isSignedIn ? Response.json(view(auth)) : new Response('the middleware let a signed-out request through', { status: 500 });
    }
    return {
      url: 'http://next.test',
      close: async () => {},
      fetch: async (input: string, init?: RequestInit) => {
        const request = new Request(input, init);
        const answer = matcher(request) ? await middleware(request) : 'next';
        return answer === 'next' ? route(request) : answer;
      },
    } as Running;
  },
};

describe.each(Object.keys(frameworks))('the %s adapter, against a running Gatehouse', (name) => {
  let gh: Gatehouse;
  let running: Running & { fetch?: typeof fetch };
  let member: SignedIn;
  let owner: SignedIn;
  let organizationId: string;
  const call = (path: string, token?: string) =>
    (running.fetch ?? fetch)(running.url + path, token ? { headers: { authorization: `Bearer ${token}` } } : {});

  beforeAll(async () => {
    gh = await startGatehouse();
    running = await frameworks[name]!({ issuer: gh.development.issuer });
    member = await gh.signUp();
    owner = await gh.signUp();
    const client = createGatehouseClient({ secretKey: gh.development.secretKey, baseUrl: gh.baseUrl });
    organizationId = (await client.organizations.create({ name: 'Acme', ownerId: owner.userId })).id;
    owner = await gh.switchOrganization(gh.development, owner.refreshToken, organizationId);
  });
  afterAll(async () => {
    await running.close();
    await gh.close();
  });

  it('a signed-in request reaches the route with its user', async () => {
    const response = await call('/me', member.accessToken);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({
      userId: member.userId,
      orgId: null,
      orgRole: null,
      canManage: false,
      isOwner: false,
      isAdmin: false,
    });
  });

  it('has() reads the organization claims of the token', async () => {
    const response = await call('/me', owner.accessToken);
    expect(await response.json()).toMatchObject({
      orgId: organizationId,
      orgRole: 'owner',
      canManage: true,
      isOwner: true,
      isAdmin: false,
    });
  });

  it('requireAuth answers 401 in Gatehouse’s error shape, with the reason', async () => {
    const missing = await call('/me');
    expect(missing.status).toBe(401);
    expect(missing.headers.get('www-authenticate')).toBe('Bearer');
    const body = (await missing.json()) as any;
    expect(body.error.code).toBe('unauthenticated');
    expect(body.error.details.reason).toBe('token-missing');
    expect(body.error.message).toMatch(/Authorization: Bearer/);

    const tampered = member.accessToken.slice(0, -4) + (member.accessToken.endsWith('AAAA') ? 'BBBB' : 'AAAA');
    const refused = await call('/me', tampered);
    expect(refused.status).toBe(401);
    expect(((await refused.json()) as any).error.details.reason).toBe('signature-invalid');

    const otherEnvironment = await gh.signUp(gh.production);
    expect(((await (await call('/me', otherEnvironment.accessToken)).json()) as any).error.details.reason).toBe('issuer-invalid');
  });

  it('routes without requireAuth still run, and see whether the request is signed in', async () => {
    expect(await (await call('/public')).json()).toEqual({ signedIn: false });
    expect(await (await call('/public', member.accessToken)).json()).toEqual({ signedIn: true });
  });
});
