/** Social sign-ins in tests: walking a provider to Gatehouse's callback, including Apple's form_post. */
import type { TestApp } from './app.js';
import { BASE_URL } from './app.js';
import { TestBrowser } from './oidc-idp.js';

/**
 * From the authorization URL through the IdP's pages until it answers with a self-posting form
 * (response_mode=form_post) aimed at Gatehouse: that form's action and fields.
 */
export async function formPostFor(browser: TestBrowser, authorizationUrl: string, login: string): Promise<{ action: string; fields: Record<string, string> }> {
  let url = authorizationUrl;
  let form: Record<string, string> | undefined;
  for (let step = 0; step < 20; step++) {
    const response = await browser.request(url, form ? { method: 'POST', form } : {});
    form = undefined;
    if (response.location) {
      url = response.location;
      continue;
    }
    const action = /<form[^>]*action="([^"]+)"/.exec(response.body)?.[1]?.replace(/&amp;/g, '&');
    if (!action) throw new Error(`The IdP answered ${response.status} at ${url}: ${response.body.slice(0, 300)}`);
    if (action.startsWith(BASE_URL)) {
      const fields: Record<string, string> = {};
      for (const match of response.body.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)"/g)) fields[match[1]!] = match[2]!.replace(/&amp;/g, '&').replace(/&quot;/g, '"');
      return { action, fields };
    }
    const prompt = /name="prompt" value="([^"]+)"/.exec(response.body)?.[1] ?? 'login';
    form = prompt === 'login' ? { prompt, login, password: 'any' } : { prompt };
    url = new URL(action, url).href;
  }
  throw new Error('Too many redirects');
}

/** Posts a provider's form to Gatehouse, as the browser's auto-submitting page does. */
export function postForm(t: TestApp, action: string, fields: Record<string, string>) {
  return t.call({
    method: 'POST',
    url: action.slice(BASE_URL.length),
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    payload: new URLSearchParams(fields).toString(),
  });
}

/** A plain OAuth 2.0 provider: authorize redirects straight back; answers Gatehouse's 303. */
export async function plainSignIn(t: TestApp, authorizationUrl: string) {
  const browser = new TestBrowser(t);
  const first = await browser.request(authorizationUrl);
  if (!first.location) throw new Error(`The provider answered ${first.status}: ${first.body}`);
  const back = await browser.request(first.location);
  if (back.status !== 303) throw new Error(`Gatehouse answered ${back.status}: ${back.body}`);
  const landed = new URL(back.location!);
  return { landed, token: landed.searchParams.get('token'), error: landed.searchParams.get('error'), linked: landed.searchParams.get('linked'), description: landed.searchParams.get('error_description') };
}
