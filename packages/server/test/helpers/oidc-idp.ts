/**
 * A real OpenID Provider in-process: oidc-provider on a loopback port, with its development login
 * and consent pages, and a small browser (cookies, manual redirects, forms) that walks them the
 * way a person's browser does. Gatehouse's own URLs (BASE_URL) are injected into the test app.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, type JWK } from 'jose';
import Provider from 'oidc-provider';
import type { TestApp } from './app.js';
import { BASE_URL } from './app.js';

export interface IdpAccount {
  email?: string;
  /** Apple sends "true"/"false" strings. */
  email_verified?: boolean | string;
  /** Entra ID's optional claim: the tenant verified the email's domain. */
  xms_edov?: boolean;
  given_name?: string;
  family_name?: string;
}

export interface TestClient {
  clientId: string;
  clientSecret: string;
  redirectUri: string;
  /** Default client_secret_basic; Apple-style clients post theirs. */
  tokenEndpointAuthMethod?: 'client_secret_basic' | 'client_secret_post';
}

export interface TestOidcIdp {
  issuer: string;
  accounts: Map<string, IdpAccount>;
  /** Registers the client (its redirect URI is known once the connection exists). */
  setClient(client: TestClient): void;
  /** Signs ID tokens with a key of its own while the JWKS still publishes the real one (same kid). */
  signWithForeignKey(on: boolean): Promise<void>;
  /** Stops answering (an IdP that is down) until `up()`. */
  down(): void;
  up(): void;
  close(): Promise<void>;
}

async function signingKey(kid: string): Promise<JWK> {
  const { privateKey } = await generateKeyPair('RS256', { extractable: true });
  return { ...(await exportJWK(privateKey)), kid, alg: 'RS256', use: 'sig' };
}

const publicPart = ({ kty, n, e, kid, alg, use }: JWK) => ({ kty, n, e, kid, alg, use });

export async function startOidcIdp(): Promise<TestOidcIdp> {
  const accounts = new Map<string, IdpAccount>();
  const realKey = await signingKey('idp-key-1');
  let signing = realKey;
  let handler: ((req: IncomingMessage, res: ServerResponse) => void) | null = null;
  let client: TestClient = { clientId: 'placeholder', clientSecret: 'placeholder-secret', redirectUri: `${BASE_URL}/none` };
  let isDown = false;

  const server: Server = createServer((req, res) => {
    if (isDown) return void req.socket.destroy();
    if (req.url === '/jwks') {
      res.setHeader('content-type', 'application/jwk-set+json');
      return void res.end(JSON.stringify({ keys: [publicPart(realKey)] }));
    }
    handler!(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const build = () => {
    const provider = new Provider(issuer, {
      clients: [
        {
          client_id: client.clientId,
          client_secret: client.clientSecret,
          redirect_uris: [client.redirectUri],
          response_types: ['code'],
          grant_types: ['authorization_code'],
          token_endpoint_auth_method: client.tokenEndpointAuthMethod ?? 'client_secret_basic',
        },
      ],
      jwks: { keys: [signing] },
      // `name` is Apple's scope: it releases the name in the form post, never in a claim.
      claims: { openid: ['sub'], email: ['email', 'email_verified', 'xms_edov'], profile: ['given_name', 'family_name'], name: [] },
      conformIdTokenClaims: false,
      pkce: { required: () => true },
      findAccount: async (_ctx: unknown, id: string) => ({
        accountId: id,
        claims: async () => ({ sub: id, ...accounts.get(id) }),
      }),
    });
    provider.on('server_error', () => undefined);
    handler = provider.callback();
  };
  build();

  return {
    issuer,
    accounts,
    setClient(next) {
      client = next;
      build();
    },
    async signWithForeignKey(on) {
      signing = on ? await signingKey('idp-key-1') : realKey;
      build();
    },
    down: () => void (isDown = true),
    up: () => void (isDown = false),
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/** A person's browser: follows redirects by hand, keeps cookies, submits the IdP's forms. */
export class TestBrowser {
  private readonly cookies = new Map<string, string>();

  constructor(private readonly t: TestApp) {}

  private remember(setCookie: string[]) {
    for (const line of setCookie) {
      const [pair] = line.split(';');
      const at = pair!.indexOf('=');
      this.cookies.set(pair!.slice(0, at).trim(), pair!.slice(at + 1));
    }
  }

  private cookieHeader() {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
  }

  /** One request; answers the status, Location and body. Gatehouse's URLs go to the test app. */
  async request(url: string, init: { method?: string; form?: Record<string, string> } = {}): Promise<{ status: number; location: string | null; body: string }> {
    if (url.startsWith(BASE_URL)) {
      const response = await this.t.call({ method: (init.method ?? 'GET') as 'GET', url: url.slice(BASE_URL.length) });
      const location = response.headers.location;
      return { status: response.statusCode, location: location ? String(location) : null, body: response.body };
    }
    const response = await fetch(url, {
      method: init.method ?? 'GET',
      redirect: 'manual',
      headers: {
        cookie: this.cookieHeader(),
        ...(init.form ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
      },
      ...(init.form ? { body: new URLSearchParams(init.form).toString() } : {}),
    });
    this.remember(response.headers.getSetCookie());
    const location = response.headers.get('location');
    return { status: response.status, location: location ? new URL(location, url).href : null, body: await response.text() };
  }

  /** From the authorization URL through the IdP's pages to Gatehouse's callback, and its answer. */
  async signIn(authorizationUrl: string, login: string): Promise<{ callbackUrl: string; status: number; location: string | null; body: string }> {
    const callbackUrl = await this.codeFor(authorizationUrl, login);
    return { callbackUrl, ...(await this.request(callbackUrl)) };
  }

  /** Stops at the callback URL the IdP sends the browser to, without calling Gatehouse. */
  async codeFor(authorizationUrl: string, login: string): Promise<string> {
    let url = authorizationUrl;
    let form: Record<string, string> | undefined;
    for (let step = 0; step < 20; step++) {
      if (url.startsWith(BASE_URL)) return url;
      const response = await this.request(url, form ? { method: 'POST', form } : {});
      form = undefined;
      if (response.location) {
        url = response.location;
        continue;
      }
      const action = /<form[^>]*action="([^"]+)"/.exec(response.body)?.[1];
      if (!action) throw new Error(`The IdP answered ${response.status} at ${url}: ${response.body.slice(0, 300)}`);
      const prompt = /name="prompt" value="([^"]+)"/.exec(response.body)?.[1] ?? 'login';
      form = prompt === 'login' ? { prompt, login, password: 'any' } : { prompt };
      url = new URL(action.replace(/&amp;/g, '&'), url).href;
    }
    throw new Error('Too many redirects');
  }
}
