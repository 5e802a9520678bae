import type { Environment } from './settings.js';

/**
 * The origin lock: which page origins may use an environment's publishable key. Origins are parsed by a strict grammar rather than `new URL()`,
 * because the WHATWG parser is forgiving by design (it accepts userinfo, backslashes, trailing dots
 * and more), and every forgiveness is a look-alike an attacker can register.
 */

const LABEL = '[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?';
const HOSTNAME = new RegExp(`^${LABEL}(?:\\.${LABEL})*$`);
const ORIGIN = /^(https?):\/\/([^/?#@\\\s:]+)(?::(\d{1,5}))?$/i;
const DEFAULT_PORT: Record<string, string> = { http: '80', https: '443' };

export interface ParsedOrigin {
  scheme: 'http' | 'https';
  host: string;
  /** Undefined when the port is the scheme's default. */
  port: string | undefined;
}

export function parseOrigin(raw: string): ParsedOrigin | null {
  const match = ORIGIN.exec(raw);
  if (!match) return null;
  const scheme = match[1]!.toLowerCase() as ParsedOrigin['scheme'];
  const host = match[2]!.toLowerCase();
  if (!HOSTNAME.test(host)) return null;
  const rawPort = match[3];
  if (rawPort !== undefined && (Number(rawPort) < 1 || Number(rawPort) > 65535)) return null;
  const port = rawPort === undefined || String(Number(rawPort)) === DEFAULT_PORT[scheme] ? undefined : String(Number(rawPort));
  return { scheme, host, port };
}

export function formatOrigin(origin: ParsedOrigin): string {
  return `${origin.scheme}://${origin.host}${origin.port ? `:${origin.port}` : ''}`;
}

/** Canonical form of an origin (lowercase host, no default port), or null if it is not one. */
export function normalizeOrigin(raw: string): string | null {
  const parsed = parseOrigin(raw);
  return parsed ? formatOrigin(parsed) : null;
}

/** Canonical form of a bare domain such as `example.com`, or null if it is not one. */
export function normalizeDomain(raw: string): string | null {
  const domain = raw.toLowerCase();
  return HOSTNAME.test(domain) && domain.includes('.') ? domain : null;
}

const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1']);

export function isOriginAllowed(environment: Environment, rawOrigin: string): boolean {
  const origin = parseOrigin(rawOrigin);
  if (!origin) return false;
  const { domain, callbackOrigins } = environment.settings;

  const onVerifiedDomain = domain !== null && (origin.host === domain || origin.host.endsWith(`.${domain}`));
  if (onVerifiedDomain && origin.scheme === 'https' && origin.port === undefined) {
    return true;
  }
  const canonical = formatOrigin(origin);
  if (callbackOrigins.includes(canonical)) return true;
  return environment.type === 'development' && origin.scheme === 'http' && LOOPBACK_HOSTS.has(origin.host);
}
