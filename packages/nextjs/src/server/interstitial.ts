import { INTERSTITIAL_SCRIPT } from './interstitial-script.js';

const escapeJson = (value: unknown) => JSON.stringify(value).replace(/</g, '\\u003c');

/**
 * The page answered to a document request whose cookie holds an expired token: it loads
 * @gatehouse/js in cookie mode, which refreshes through the stored refresh token (the one place it
 * lives) and rewrites the cookie, or clears it when this browser holds no session, then reloads.
 * Never cached; 401, since the request as sent was not authenticated.
 */
export function interstitialResponse(publishableKey: string, baseUrl: string): Response {
  const html = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="robots" content="noindex"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>Signing you in…</title>
<style>body{font:15px system-ui,sans-serif;display:grid;place-items:center;min-height:90vh;color:#555}</style></head>
<body><p id="gh-interstitial" role="status">Signing you in…</p>
<script id="__gh_config" type="application/json">${escapeJson({ publishableKey, baseUrl })}</script>
<script>${INTERSTITIAL_SCRIPT}</script>
</body></html>`;
  return new Response(html, {
    status: 401,
    headers: {
      'content-type': 'text/html; charset=utf-8',
      'cache-control': 'no-store',
      'x-gatehouse-auth': 'interstitial',
      'x-robots-tag': 'noindex',
    },
  });
}
