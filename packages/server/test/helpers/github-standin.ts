/**
 * GitHub cannot be reached from tests, so this stands in for the part of it the preset uses, with
 * GitHub's shapes: the OAuth web flow (code, state, PKCE S256, client_secret_post), GET /user and
 * GET /user/emails. It checks what GitHub checks, so a wrong verifier or secret fails here too.
 */
import { createHash, randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface GithubUser {
  id: number;
  name: string;
  emails: { email: string; primary: boolean; verified: boolean }[];
}

export async function startGithubStandin(client: { clientId: string; clientSecret: string }) {
  /** Who the next authorization signs in as. */
  let next: GithubUser | null = null;
  const codes = new Map<string, { user: GithubUser; challenge: string; redirectUri: string }>();
  const tokens = new Map<string, GithubUser>();
  const server: Server = createServer(async (req, res) => {
    const url = new URL(req.url!, 'http://x');
    const send = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    if (url.pathname === '/login/oauth/authorize') {
      if (url.searchParams.get('client_id') !== client.clientId || url.searchParams.get('code_challenge_method') !== 'S256' || !next) return send(400, { error: 'bad_request' });
      const code = randomBytes(10).toString('hex');
      const redirectUri = url.searchParams.get('redirect_uri')!;
      codes.set(code, { user: next, challenge: url.searchParams.get('code_challenge')!, redirectUri });
      const back = new URL(redirectUri);
      back.searchParams.set('code', code);
      back.searchParams.set('state', url.searchParams.get('state')!);
      res.writeHead(302, { location: back.href });
      return void res.end();
    }
    if (url.pathname === '/login/oauth/access_token' && req.method === 'POST') {
      let body = '';
      for await (const chunk of req) body += chunk;
      const form = new URLSearchParams(body);
      const grant = codes.get(form.get('code') ?? '');
      codes.delete(form.get('code') ?? '');
      const verifier = form.get('code_verifier') ?? '';
      if (
        !grant ||
        form.get('client_id') !== client.clientId ||
        form.get('client_secret') !== client.clientSecret ||
        form.get('redirect_uri') !== grant.redirectUri ||
        createHash('sha256').update(verifier).digest('base64url') !== grant.challenge
      ) {
        return send(200, { error: 'bad_verification_code', error_description: 'The code passed is incorrect or expired.' });
      }
      const token = `gho_${randomBytes(16).toString('hex')}`;
      tokens.set(token, grant.user);
      return send(200, { access_token: token, token_type: 'bearer', scope: 'read:user,user:email' });
    }
    const user = tokens.get((req.headers.authorization ?? '').replace(/^Bearer /, ''));
    if (!user) return send(401, { message: 'Requires authentication' });
    if (url.pathname === '/user') return send(200, { id: user.id, login: `user${user.id}`, name: user.name });
    if (url.pathname === '/user/emails') return send(200, user.emails.map((e) => ({ ...e, visibility: null })));
    send(404, { message: 'Not Found' });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    signInAs: (user: GithubUser) => void (next = user),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
