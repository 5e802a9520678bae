import { NextRequest, type NextFetchEvent } from 'next/server';
import { describe, expect, it, vi } from 'vitest';
import { gatehouseMiddleware } from '../src/server/middleware.js';

// The interstitial's script is bundled at build time (scripts/bundle-interstitial.mjs); these
// requests never reach it (no expired cookie), and the example's browser test covers the page.
vi.mock('../src/server/interstitial.js', () => ({ interstitialResponse: () => new Response('interstitial', { status: 401 }) }));

/** The middleware's own redirect to sign-in, for a signed-out document request. */
async function signInRedirectFor(path: string): Promise<string | null> {
  const middleware = gatehouseMiddleware(
    async (auth) => {
      await auth.protect();
    },
    { issuer: 'https://auth.example.test/v1/environments/env_1', publishableKey: 'pk_test_x', baseUrl: 'https://auth.example.test' },
  );
  const request = new NextRequest(new URL(path, 'https://app.example.test'), { headers: { 'sec-fetch-dest': 'document', accept: 'text/html' } });
  const response = await middleware(request, {} as NextFetchEvent);
  expect(response.status).toBe(307);
  return response.headers.get('location');
}

describe('gatehouseMiddleware: auth.protect() redirects a signed-out page to sign-in', () => {
  it('carries a same-origin path back', async () => {
    expect(await signInRedirectFor('/protected?tab=1')).toBe('https://app.example.test/sign-in?redirect_url=%2Fprotected%3Ftab%3D1');
  });

  it('open redirect: a path that a browser reads as another host (//evil) is not carried back', async () => {
    const location = await signInRedirectFor('https://app.example.test//evil.test/x');
    expect(location).toBe('https://app.example.test/sign-in');
  });
});
