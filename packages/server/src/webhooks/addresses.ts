import { lookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';

/**
 * Where a webhook may be sent. Production endpoints must be https and reach only public addresses:
 * otherwise an operator's endpoint could make the server probe its own network (SSRF). The URL is
 * checked at creation, and the addresses its host resolves to are checked again at every send
 * (a name may be re-pointed at a private address after creation: DNS rebinding).
 */

const NON_PUBLIC = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const) {
  NON_PUBLIC.addSubnet(network, prefix, 'ipv4');
}
for (const [network, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
  ['64:ff9b::', 96],
] as const) {
  NON_PUBLIC.addSubnet(network, prefix, 'ipv6');
}

/** Whether an IP address is loopback, private, link-local or otherwise not a public host. */
export function isNonPublicAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return NON_PUBLIC.check(address, 'ipv4');
  if (family === 6) {
    // An IPv4-mapped address (::ffff:10.0.0.1) is checked as the IPv4 address it carries.
    const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
    if (mapped) return NON_PUBLIC.check(mapped[1]!, 'ipv4');
    return NON_PUBLIC.check(address, 'ipv6');
  }
  return true;
}

function bareHost(url: URL): string {
  return url.hostname.replace(/^\[|\]$/g, '').toLowerCase();
}

function isLocalhostName(host: string): boolean {
  return host === 'localhost' || host.endsWith('.localhost');
}

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
  const host = bareHost(url);
  const local = isLocalhostName(host) || (isIP(host) !== 0 && isNonPublicAddress(host));
  if (environmentType === 'development') {
    if (url.protocol === 'https:') return undefined;
    if (url.protocol === 'http:' && (host === 'localhost' || host === '127.0.0.1')) return undefined;
    return 'url must be https, or http://localhost:<port> or http://127.0.0.1:<port> in a development environment.';
  }
  if (url.protocol !== 'https:') return 'url must be https in a production environment.';
  if (local) {
    return 'url must reach a public host in a production environment, not localhost or a loopback, private or link-local address.';
  }
  return undefined;
}

export type Resolver = (host: string) => Promise<{ address: string; family: number }[]>;

export const systemResolver: Resolver = (host) => lookup(host, { all: true, verbatim: true });

/**
 * The addresses the connection may use for `url`, checked for this environment type. Development
 * endpoints may be local; production ones must resolve only to public addresses (all of them, so a
 * name with one public and one private record cannot be steered to the private one).
 */
export async function resolveSendAddresses(
  url: URL,
  environmentType: 'development' | 'production',
  resolve: Resolver,
): Promise<{ address: string; family: number }[]> {
  const host = bareHost(url);
  const literal = isIP(host);
  const addresses = literal !== 0 ? [{ address: host, family: literal }] : await resolve(host);
  if (addresses.length === 0) throw new SendRefused(`${host} does not resolve to any address`);
  if (environmentType === 'production') {
    const bad = addresses.find((a) => isNonPublicAddress(a.address));
    if (bad) throw new SendRefused(`${host} resolves to ${bad.address}, a loopback, private or link-local address; not sent`);
  }
  return addresses;
}

export class SendRefused extends Error {
  override readonly name = 'SendRefused';
}
