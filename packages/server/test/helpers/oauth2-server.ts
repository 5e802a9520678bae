/**
 * A plain OAuth 2.0 authorization server (RFC 6749 with PKCE, no OpenID Connect) on a loopback
 * port: authorize, token and a userinfo endpoint answering whatever JSON the test chose for the
 * person. It checks what a real one checks (client authentication by the chosen method, the code
 * once, the redirect URI, the PKCE verifier), so a mistake in Gatehouse's side fails here too.
 * Paths: `/authorize`, `/token`, `/userinfo`; Discord's (`/oauth2/authorize`, `/api/oauth2/token`,
 * `/api/users/@me`) answer alike, so the preset runs against it too.
 */
import { createHash, randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface OAuth2ServerOptions {
  clientId: string;
  clientSecret: string;
  /** How the client must authenticate at the token endpoint. */
  authMethod: 'client_secret_basic' | 'client_secret_post';
}

export async function startOAuth2Server(options: OAuth2ServerOptions) {
  let next: unknown = null;
  const codes = new Map<string, { userinfo: unknown; challenge: string; redirectUri: string }>();
  const tokens = new Map<string, unknown>();
  const seen = { tokenRequests: 0, userinfoRequests: 0 };
  const server: Server = createServer(async (req, res) => {
    const url = new URL(req.url!, 'http://x');
    const send = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store' });
      res.end(JSON.stringify(body));
    };
    const path = url.pathname;
    if (path === '/authorize' || path === '/oauth2/authorize') {
      const q = url.searchParams;
      if (q.get('client_id') !== options.clientId || q.get('response_type') !== 'code' || q.get('code_challenge_method') !== 'S256' || !q.get('code_challenge')) {
        return send(400, { error: 'invalid_request' });
      }
      const back = new URL(q.get('redirect_uri')!);
      if (next === null) {
        back.searchParams.set('error', 'access_denied');
      } else {
        const code = randomBytes(12).toString('hex');
        codes.set(code, { userinfo: next, challenge: q.get('code_challenge')!, redirectUri: q.get('redirect_uri')! });
        back.searchParams.set('code', code);
      }
      back.searchParams.set('state', q.get('state')!);
      res.writeHead(302, { location: back.href });
      return void res.end();
    }
    if ((path === '/token' || path === '/api/oauth2/token') && req.method === 'POST') {
      seen.tokenRequests++;
      let body = '';
      for await (const chunk of req) body += chunk;
      const form = new URLSearchParams(body);
      let id: string | null;
      let secret: string | null;
      if (options.authMethod === 'client_secret_basic') {
        const basic = Buffer.from((req.headers.authorization ?? '').replace(/^Basic /, ''), 'base64').toString();
        [id, secret] = basic.includes(':') ? basic.split(':').map(decodeURIComponent) as [string, string] : [null, null];
      } else {
        id = form.get('client_id');
        secret = form.get('client_secret');
      }
      if (id !== options.clientId || secret !== options.clientSecret) return send(401, { error: 'invalid_client' });
      const grant = codes.get(form.get('code') ?? '');
      codes.delete(form.get('code') ?? '');
      if (
        !grant ||
        form.get('grant_type') !== 'authorization_code' ||
        form.get('redirect_uri') !== grant.redirectUri ||
        createHash('sha256').update(form.get('code_verifier') ?? '').digest('base64url') !== grant.challenge
      ) {
        return send(400, { error: 'invalid_grant' });
      }
      const token = randomBytes(16).toString('hex');
      tokens.set(token, grant.userinfo);
      return send(200, { access_token: token, token_type: 'Bearer', expires_in: 3600 });
    }
    if (path === '/userinfo' || path === '/api/users/@me') {
      seen.userinfoRequests++;
      const userinfo = tokens.get((req.headers.authorization ?? '').replace(/^Bearer /, ''));
      if (userinfo === undefined) return send(401, { error: 'invalid_token' });
      return send(200, userinfo);
    }
    send(404, { error: 'not_found' });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    base,
    seen,
    /** The userinfo JSON the next authorization answers with; null makes the person refuse (access_denied). */
    signInAs: (userinfo: unknown) => void (next = userinfo),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
