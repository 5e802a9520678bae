import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

export const HOSTED_PAGES = ['sign-in', 'sign-up', 'user', 'organization', 'accept-invitation', 'actor'] as const;
export type HostedPage = (typeof HOSTED_PAGES)[number];

/** What the page script reads: public values only (a publishable key is public). */
export interface HostedConfig {
  page: HostedPage;
  environmentId: string;
  publishableKey: string;
  baseUrl: string;
  redirectUrl: string | null;
  redirectError: string | null;
  /** The project's name and logo, shown above the forms. */
  applicationName: string;
  logoUrl: string | null;
}

// Scripts and inline styles of the React components only; nothing else may load or be framed.
export const HOSTED_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' https: data: blob:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'";

const TITLES: Record<HostedPage, string> = {
  'sign-in': 'Sign in',
  'sign-up': 'Sign up',
  user: 'Your account',
  organization: 'Organization',
  'accept-invitation': 'Accept invitation',
  actor: 'Signing in as a user',
};

function escapeJson(value: unknown): string {
  // Inside <script type=application/json>: "<" can never close the element.
  return JSON.stringify(value).replace(/</g, '\\u003c');
}

export function renderPage(config: HostedConfig): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>${TITLES[config.page]}</title>
<script id="gatehouse-config" type="application/json">${escapeJson(config)}</script>
<script type="module" src="/hosted/assets/hosted.js"></script>
</head><body><div id="root"></div></body></html>`;
}

let bundle: Promise<Buffer> | undefined;

/**
 * The page script, built by @gatehouse/react at install (`prepare`). Read on first use, not at
 * start, so serving hosted pages costs the server's start nothing.
 */
export function hostedBundle(): Promise<Buffer> {
  bundle ??= (async () => {
    const require = createRequire(import.meta.url);
    const root = dirname(require.resolve('@gatehouse/react/package.json'));
    return readFile(join(root, 'dist-hosted', 'hosted.js'));
  })();
  bundle.catch(() => (bundle = undefined));
  return bundle;
}
