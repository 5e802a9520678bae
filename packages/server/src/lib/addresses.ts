import { lookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';

/**
 * Which hosts the server may connect to on an operator's or an IdP's behalf (webhook deliveries,
 * SSO discovery and token calls). Production targets must reach only public addresses, otherwise a
 * URL could make the server probe its own network (SSRF). Names are resolved and their addresses
 * checked at every connection, and the socket connects to the checked addresses only, so a name
 * re-pointed at a private address after it was saved is refused (DNS rebinding).
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
  // IPv4-compatible (::a.b.c.d, deprecated) and the unspecified and loopback addresses.
  ['::', 96],
  ['100::', 64],
  // NAT64, well-known and local-use: the IPv4 address inside is the NAT's to reach, often a private one.
  ['64:ff9b::', 96],
  ['64:ff9b:1::', 48],
  // Teredo carries its IPv4 address obfuscated; no public service is reached through it.
  ['2001::', 32],
  ['2001:db8::', 32],
  ['fc00::', 7],
  ['fe80::', 10],
  ['fec0::', 10],
  ['ff00::', 8],
] as const) {
  NON_PUBLIC.addSubnet(network, prefix, 'ipv6');
}

/** The eight 16-bit groups of a valid IPv6 address (a dotted IPv4 tail included). */
function ipv6Groups(address: string): number[] {
  let text = address.toLowerCase();
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.split('::') as [string, string | undefined];
  const parse = (part: string | undefined) => (part ? part.split(':').map((g) => parseInt(g, 16)) : []);
  const front = parse(head);
  const back = parse(tail);
  return tail === undefined ? front : [...front, ...new Array<number>(8 - front.length - back.length).fill(0), ...back];
}

/** The IPv4 address an IPv6 one carries by a standard mapping (mapped, translated, 6to4), if any. */
function embeddedIpv4(address: string): string | undefined {
  const g = ipv6Groups(address);
  const v4 = (hi: number, lo: number) => `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
  const zeros = (from: number, to: number) => g.slice(from, to).every((x) => x === 0);
  // ::ffff:a.b.c.d (mapped) and ::ffff:0:a.b.c.d (translated).
  if (zeros(0, 5) && g[5] === 0xffff) return v4(g[6]!, g[7]!);
  if (zeros(0, 4) && g[4] === 0xffff && g[5] === 0) return v4(g[6]!, g[7]!);
  // 6to4: 2002:aabb:ccdd::/48 routes to a.b.c.d.
  if (g[0] === 0x2002) return v4(g[1]!, g[2]!);
  return undefined;
}

/** Whether an IP address is loopback, private, link-local or otherwise not a public host. */
export function isNonPublicAddress(address: string): boolean {
  const bare = address.replace(/^\[|\]$/g, '').replace(/%.*$/, '');
  const family = isIP(bare);
  if (family === 4) return NON_PUBLIC.check(bare, 'ipv4');
  if (family === 6) {
    const inner = embeddedIpv4(bare);
    if (inner !== undefined) return NON_PUBLIC.check(inner, 'ipv4');
    return NON_PUBLIC.check(bare, 'ipv6');
  }
  return true;
}

/** The URL's host without IPv6 brackets or trailing dots (`localhost.` is `localhost`), lowercased. */
export function bareHost(url: URL): string {
  return url.hostname.replace(/^\[|\]$/g, '').replace(/\.+$/, '').toLowerCase();
}

export function isLocalhostName(host: string): boolean {
  return host === 'localhost' || host.endsWith('.localhost');
}

/** A host written as a loopback, private or link-local address, or a localhost name. */
export function isLocalHost(url: URL): boolean {
  const host = bareHost(url);
  return isLocalhostName(host) || (isIP(host) !== 0 && isNonPublicAddress(host));
}

export type Resolver = (host: string) => Promise<{ address: string; family: number }[]>;

export const systemResolver: Resolver = (host) => lookup(host, { all: true, verbatim: true });

/**
 * The addresses a connection to `url` may use, checked for this environment type. Development
 * targets may be local; production ones must resolve only to public addresses (all of them, so a
 * name with one public and one private record cannot be steered to the private one).
 */
export async function resolveSendAddresses(
  url: URL,
  environmentType: 'development' | 'production',
  resolve: Resolver,
): Promise<{ address: string; family: number }[]> {
  const host = bareHost(url);
  const literal = isIP(host);
  if (environmentType === 'production' && isLocalhostName(host)) throw new SendRefused(`${host} is a local name; not sent`);
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

/**
 * Why a URL cannot be an endpoint (a webhook's, an IdP's) of this environment type; undefined when
 * it can. Production endpoints must be https and reach only public addresses; the addresses a host
 * resolves to are checked again at every send (DNS rebinding).
 */
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
