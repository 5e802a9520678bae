import { isLocalHost } from '../lib/addresses.js';

/**
 * Where a webhook may be sent. Production endpoints must be https and reach only public addresses
 * (the guard itself is shared with SSO in lib/addresses.ts). The URL is checked at creation, and
 * the addresses its host resolves to are checked again at every send (DNS rebinding).
 */
export { isNonPublicAddress, resolveSendAddresses, SendRefused, systemResolver, type Resolver } from '../lib/addresses.js';

/** Why a URL cannot be an endpoint of this environment type; undefined when it can. */
export function endpointUrlProblem(raw: string, environmentType: 'development' | 'production'): string | undefined {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'url is not an absolute URL. Send the full address of your receiver, e.g. https://example.com/webhooks/gatehouse.';
  }
  if (url.username || url.password) return 'url must not carry credentials. Authenticate deliveries by their signature instead.';
  if (url.hash) return 'url must not have a #fragment.';
  if (environmentType === 'development') {
    if (url.protocol === 'https:') return undefined;
    if (url.protocol === 'http:' && (url.hostname === 'localhost' || url.hostname === '127.0.0.1')) return undefined;
    return 'url must be https, or http://localhost:<port> or http://127.0.0.1:<port> in a development environment.';
  }
  if (url.protocol !== 'https:') return 'url must be https in a production environment.';
  // Written forms are normalised first: localhost. and localhost are one host, [::127.0.0.1] and
  // [::ffff:7f00:1] carry 127.0.0.1, and 2130706433 or 0177.0.0.1 are parsed to it by the URL.
  if (isLocalHost(url)) {
    return 'url must reach a public host in a production environment, not localhost or a loopback, private or link-local address.';
  }
  return undefined;
}
