import { describe, expect, it } from 'vitest';
import { safePath, signInRedirect } from '../src/server/auth.js';
import { createRouteMatcher } from '../src/server/route-matcher.js';
import { cookieValue, isDocumentRequest } from '../src/server/request.js';

describe('createRouteMatcher', () => {
  const matches = (patterns: (string | RegExp)[], path: string) => createRouteMatcher(patterns)(new Request(`https://app.test${path}`));

  it('(.*) matches anything, :name one segment, RegExps as they are; query strings are ignored', () => {
    expect(matches(['/dashboard(.*)'], '/dashboard')).toBe(true);
    expect(matches(['/dashboard(.*)'], '/dashboard/a/b?x=1')).toBe(true);
    expect(matches(['/dashboard(.*)'], '/dashboards-public')).toBe(true);
    expect(matches(['/api/:id'], '/api/42')).toBe(true);
    expect(matches(['/api/:id'], '/api/42/more')).toBe(false);
    expect(matches(['/protected'], '/protected/')).toBe(true);
    expect(matches(['/protected'], '/protectedx')).toBe(false);
    expect(matches([/^\/admin/], '/admin/users')).toBe(true);
    expect(matches(['/a.b'], '/aXb')).toBe(false);
  });
});

describe('auth.protect() redirects', () => {
  it('open redirect: only a same-origin path is carried back, never //host or a URL', () => {
    expect(safePath('/protected?x=1')).toBe('/protected?x=1');
    for (const value of ['//evil.test/', 'https://evil.test/', '/\\evil.test', 'javascript:alert(1)', null]) expect(safePath(value)).toBeUndefined();
    expect(signInRedirect('/sign-in', '/protected')).toBe('/sign-in?redirect_url=%2Fprotected');
    expect(signInRedirect('/sign-in?x=1', undefined)).toBe('/sign-in?x=1');
  });
});

describe('requests', () => {
  it('a document request is Sec-Fetch-Dest: document, or (without it) an Accept naming text/html', () => {
    expect(isDocumentRequest({ secFetchDest: 'document', accept: '*/*' })).toBe(true);
    expect(isDocumentRequest({ secFetchDest: null, accept: 'text/html,application/xhtml+xml' })).toBe(true);
    expect(isDocumentRequest({ secFetchDest: 'empty', accept: 'text/html' })).toBe(false);
    expect(isDocumentRequest({ secFetchDest: null, accept: 'application/json' })).toBe(false);
  });

  it('reads one cookie of a Cookie header', () => {
    expect(cookieValue('a=1; __gh_session=tok.en.x; b=2', '__gh_session')).toBe('tok.en.x');
    expect(cookieValue('x__gh_session=no', '__gh_session')).toBeNull();
    expect(cookieValue(null, '__gh_session')).toBeNull();
  });
});
