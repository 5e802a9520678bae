import { isIP } from 'node:net';
import path from 'node:path';

export interface Config {
  port: number;
  host: string;
  baseUrl: string;
  dataDir: string;
  /** Unset means the embedded SQLite database in the data directory. */
  databaseUrl: string | undefined;
  /** PostgreSQL schema to use (created if missing); unset means the connection's default. */
  databaseSchema: string | undefined;
  redisUrl: string | undefined;
  /** Prefix of every Redis key and channel, so deployments can share one Redis. */
  redisPrefix: string;
  /** Unset means one is generated into the data directory on first start. */
  platformKey: string | undefined;
  /** Unset means one is generated into the data directory on first start. */
  instanceSecret: string | undefined;
  /** SMTP delivery for production environments; unset means production mail cannot be sent. */
  smtpUrl: string | undefined;
  smtpFrom: string;
  /** False for API-only nodes: they write the outbox, and other nodes deliver it. */
  emailWorker: boolean;
  logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  /** Unset means the filesystem object store under the data directory. */
  s3: S3Config | undefined;
  /**
   * The proxies whose X-Forwarded-For names the client (addresses, CIDR blocks, or `loopback`,
   * `linklocal`, `uniquelocal`). Unset: the client is the socket's peer, whatever the headers say.
   */
  trustProxy: string[] | undefined;
  /** Days the operators' audit log keeps an entry; null keeps every entry. */
  auditRetentionDays: number | null;
  /** Prometheus metrics on a listener of their own; unset: no metrics, and prom-client never loads. */
  metrics: { port: number; host: string } | undefined;
  /** OpenTelemetry traces over OTLP/HTTP; unset: no tracing, and OpenTelemetry never loads. */
  otel: OtelConfig | undefined;
}

export interface OtelConfig {
  endpoint: string;
  protocol: 'http/protobuf' | 'http/json';
  serviceName: string;
}

export interface S3Config {
  endpoint: string;
  bucket: string;
  region: string;
  accessKeyId: string;
  secretAccessKey: string;
  /** Where stored objects are publicly readable; object keys are appended to it. */
  publicBaseUrl: string;
}

/** A bad configuration value. The message is one line that names the variable. */
export class ConfigError extends Error {
  constructor(
    readonly variable: string,
    problem: string,
  ) {
    super(`${variable}: ${problem}`);
  }
}

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export const PLATFORM_KEY_PREFIX = 'plk_';
const MIN_SECRET_LENGTH = 32;

type Env = Record<string, string | undefined>;

function optional(env: Env, name: string): string | undefined {
  const value = env[name]?.trim();
  return value === '' ? undefined : value;
}

function parsePort(raw: string | undefined): number {
  if (raw === undefined) return 4000;
  if (!/^\d+$/.test(raw) || Number(raw) > 65535) {
    throw new ConfigError('PORT', `"${raw}" is not a port number; use an integer from 0 to 65535.`);
  }
  return Number(raw);
}

function parseBaseUrl(raw: string | undefined, port: number): string {
  if (raw === undefined) return `http://localhost:${port}`;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError('GATEHOUSE_BASE_URL', `"${raw}" is not a URL; use the public origin, e.g. https://auth.example.com.`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw new ConfigError('GATEHOUSE_BASE_URL', `"${raw}" must start with https:// (or http:// for local development).`);
  }
  if (url.search || url.hash || url.username || url.password) {
    throw new ConfigError('GATEHOUSE_BASE_URL', `"${raw}" must not carry credentials, a query or a fragment.`);
  }
  // Issuer URLs are built by appending paths, so keep no trailing slash.
  return `${url.origin}${url.pathname.replace(/\/+$/, '')}`;
}

function parseDatabaseUrl(raw: string | undefined): string | undefined {
  if (raw === undefined) return undefined;
  if (!/^postgres(ql)?:\/\//.test(raw)) {
    throw new ConfigError('DATABASE_URL', 'must be a postgres:// URL; leave it unset for the embedded SQLite database.');
  }
  return raw;
}

function parseDatabaseSchema(raw: string | undefined, databaseUrl: string | undefined): string | undefined {
  if (raw === undefined) return undefined;
  if (!databaseUrl) throw new ConfigError('DATABASE_SCHEMA', 'only applies to PostgreSQL; set DATABASE_URL too, or unset it.');
  if (!/^[a-z_][a-z0-9_]{0,62}$/.test(raw)) {
    throw new ConfigError('DATABASE_SCHEMA', `"${raw}" is not a plain schema name; use lowercase letters, digits and underscores.`);
  }
  return raw;
}

function parseRedisUrl(raw: string | undefined): string | undefined {
  if (raw === undefined) return undefined;
  if (!/^rediss?:\/\//.test(raw)) {
    throw new ConfigError('REDIS_URL', 'must be a redis:// or rediss:// URL; leave it unset for the in-memory limiter.');
  }
  return raw;
}

function parseRedisPrefix(raw: string | undefined): string {
  if (raw === undefined) return 'gh:';
  if (!/^[A-Za-z0-9:_-]{1,64}$/.test(raw) || /[{}]/.test(raw)) {
    throw new ConfigError('GATEHOUSE_REDIS_PREFIX', `"${raw}" must be 1–64 letters, digits, ':', '_' or '-'.`);
  }
  return raw;
}

function parsePlatformKey(raw: string | undefined): string | undefined {
  if (raw === undefined) return undefined;
  if (!raw.startsWith(PLATFORM_KEY_PREFIX) || raw.length < PLATFORM_KEY_PREFIX.length + MIN_SECRET_LENGTH) {
    throw new ConfigError(
      'GATEHOUSE_PLATFORM_KEY',
      `must start with "${PLATFORM_KEY_PREFIX}" followed by at least ${MIN_SECRET_LENGTH} random characters; leave it unset to have one generated.`,
    );
  }
  return raw;
}

function parseSecret(raw: string | undefined): string | undefined {
  if (raw === undefined) return undefined;
  if (raw.length < MIN_SECRET_LENGTH) {
    throw new ConfigError(
      'GATEHOUSE_SECRET',
      `must be at least ${MIN_SECRET_LENGTH} characters of random data (try: openssl rand -base64 48); leave it unset to have one generated.`,
    );
  }
  return raw;
}

function parseSmtpUrl(raw: string | undefined): string | undefined {
  if (raw === undefined) return undefined;
  if (!/^smtps?:\/\/[^\s]+$/.test(raw)) {
    throw new ConfigError('SMTP_URL', 'must be an smtp:// or smtps:// URL, e.g. smtps://user:pass@smtp.example.com:465.');
  }
  return raw;
}

function parseSmtpFrom(raw: string | undefined, baseUrl: string): string {
  if (raw === undefined) return `no-reply@${new URL(baseUrl).hostname}`;
  if (!/^[^\s@<>",;]+@[^\s@<>",;]+$/.test(raw)) {
    throw new ConfigError('SMTP_FROM', `"${raw}" must be one plain address such as auth@example.com, with no display name.`);
  }
  return raw;
}

function parseOnOff(name: string, raw: string | undefined, fallback: boolean): boolean {
  if (raw === undefined) return fallback;
  if (raw === 'on' || raw === 'off') return raw === 'on';
  throw new ConfigError(name, `"${raw}" must be "on" or "off".`);
}

function parseLogLevel(raw: string | undefined): Config['logLevel'] {
  if (raw === undefined) return 'info';
  if (!(LOG_LEVELS as readonly string[]).includes(raw)) {
    throw new ConfigError('LOG_LEVEL', `"${raw}" is not one of ${LOG_LEVELS.join(', ')}.`);
  }
  return raw as Config['logLevel'];
}

const S3_VARIABLES = ['S3_ENDPOINT', 'S3_BUCKET', 'S3_REGION', 'S3_ACCESS_KEY_ID', 'S3_SECRET_ACCESS_KEY', 'S3_PUBLIC_BASE_URL'] as const;
const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]']);

function parseHttpUrl(variable: string, raw: string): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError(variable, `"${raw}" is not a URL.`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new ConfigError(variable, `"${raw}" must start with https://.`);
  if (url.search || url.hash || url.username || url.password) {
    throw new ConfigError(variable, `"${raw}" must not carry credentials, a query or a fragment.`);
  }
  return url;
}

// All or nothing: a partial S3 configuration would otherwise fall back to the filesystem store
// without anyone noticing, and uploads would land on one node's disk.
function parseS3(env: Env): S3Config | undefined {
  const values = Object.fromEntries(S3_VARIABLES.map((name) => [name, optional(env, name)])) as Record<
    (typeof S3_VARIABLES)[number],
    string | undefined
  >;
  const set = S3_VARIABLES.filter((name) => values[name] !== undefined);
  if (set.length === 0) return undefined;
  const missing = S3_VARIABLES.find((name) => values[name] === undefined);
  if (missing) {
    throw new ConfigError(
      missing,
      `is required because ${set[0]} is set; the S3 object store needs all of ${S3_VARIABLES.join(', ')} (or none of them, for the filesystem store).`,
    );
  }
  const v = values as Record<(typeof S3_VARIABLES)[number], string>;
  const endpoint = parseHttpUrl('S3_ENDPOINT', v.S3_ENDPOINT);
  if (endpoint.pathname !== '/')
    throw new ConfigError('S3_ENDPOINT', `"${v.S3_ENDPOINT}" must be an origin with no path, e.g. https://s3.eu-west-1.amazonaws.com.`);
  if (!/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/.test(v.S3_BUCKET) || v.S3_BUCKET.includes('..')) {
    throw new ConfigError(
      'S3_BUCKET',
      `"${v.S3_BUCKET}" is not a valid bucket name (3 to 63 lowercase letters, digits, dots and hyphens).`,
    );
  }
  if (!/^[a-z0-9-]{1,64}$/.test(v.S3_REGION)) {
    throw new ConfigError('S3_REGION', `"${v.S3_REGION}" is not a region name such as us-east-1 (MinIO and others accept us-east-1).`);
  }
  const publicBase = parseHttpUrl('S3_PUBLIC_BASE_URL', v.S3_PUBLIC_BASE_URL);
  // Saved image URLs must be https; plain http is only usable on a loopback host, for local development.
  if (publicBase.protocol === 'http:' && !LOOPBACK.has(publicBase.hostname)) {
    throw new ConfigError(
      'S3_PUBLIC_BASE_URL',
      `"${v.S3_PUBLIC_BASE_URL}" must be https:// (plain http only on localhost, 127.0.0.1 or [::1]).`,
    );
  }
  return {
    endpoint: endpoint.origin,
    bucket: v.S3_BUCKET,
    region: v.S3_REGION,
    accessKeyId: v.S3_ACCESS_KEY_ID,
    secretAccessKey: v.S3_SECRET_ACCESS_KEY,
    publicBaseUrl: `${publicBase.origin}${publicBase.pathname.replace(/\/+$/, '')}`,
  };
}

const PROXY_RANGES = new Set(['loopback', 'linklocal', 'uniquelocal']);

function parseTrustProxy(raw: string | undefined): string[] | undefined {
  if (raw === undefined) return undefined;
  const entries = raw.split(',').map((entry) => entry.trim());
  for (const entry of entries) {
    const [address = '', bits, extra] = entry.split('/');
    const family = isIP(address);
    const maxBits = family === 6 ? 128 : 32;
    const validBits = bits === undefined || (/^\d{1,3}$/.test(bits) && Number(bits) <= maxBits);
    if (!PROXY_RANGES.has(entry) && (family === 0 || !validBits || extra !== undefined)) {
      throw new ConfigError(
        'TRUST_PROXY',
        `"${entry}" is not an IP address, a CIDR block or one of loopback, linklocal, uniquelocal; list your proxies separated by commas, e.g. 10.0.0.0/8,127.0.0.1.`,
      );
    }
  }
  return entries;
}

export const DEFAULT_AUDIT_RETENTION_DAYS = 365;

function parseAuditRetention(raw: string | undefined): number | null {
  if (raw === undefined) return DEFAULT_AUDIT_RETENTION_DAYS;
  if (!/^\d{1,5}$/.test(raw.trim()) || Number(raw) > 36_500) {
    throw new ConfigError('AUDIT_RETENTION_DAYS', `"${raw}" must be a whole number of days up to 36500, or 0 to keep every entry.`);
  }
  return Number(raw) === 0 ? null : Number(raw);
}

function parseMetrics(env: Env, port: number, host: string): Config['metrics'] {
  const raw = optional(env, 'METRICS_PORT');
  if (raw === undefined) {
    if (optional(env, 'METRICS_HOST') !== undefined)
      throw new ConfigError('METRICS_HOST', 'only applies with METRICS_PORT; set it too, or unset this.');
    return undefined;
  }
  if (!/^\d+$/.test(raw) || Number(raw) < 1 || Number(raw) > 65535) {
    throw new ConfigError('METRICS_PORT', `"${raw}" is not a port number; use an integer from 1 to 65535.`);
  }
  if (Number(raw) === port) {
    throw new ConfigError('METRICS_PORT', `must differ from PORT (${port}): metrics are never served on the public port.`);
  }
  return { port: Number(raw), host: optional(env, 'METRICS_HOST') ?? host };
}

function parseOtel(env: Env): OtelConfig | undefined {
  const endpoint = optional(env, 'OTEL_EXPORTER_OTLP_ENDPOINT');
  if (endpoint === undefined) return undefined;
  const url = parseHttpUrl('OTEL_EXPORTER_OTLP_ENDPOINT', endpoint);
  const protocol = optional(env, 'OTEL_EXPORTER_OTLP_PROTOCOL') ?? 'http/protobuf';
  if (protocol !== 'http/protobuf' && protocol !== 'http/json') {
    throw new ConfigError('OTEL_EXPORTER_OTLP_PROTOCOL', `"${protocol}" is not supported; use http/protobuf (the default) or http/json.`);
  }
  return {
    endpoint: `${url.origin}${url.pathname.replace(/\/+$/, '')}`,
    protocol,
    serviceName: optional(env, 'OTEL_SERVICE_NAME') ?? 'gatehouse',
  };
}

export function loadConfig(env: Env = process.env): Config {
  const port = parsePort(optional(env, 'PORT'));
  const databaseUrl = parseDatabaseUrl(optional(env, 'DATABASE_URL'));
  const baseUrl = parseBaseUrl(optional(env, 'GATEHOUSE_BASE_URL'), port);
  const host = optional(env, 'HOST') ?? '0.0.0.0';
  return {
    port,
    host,
    baseUrl,
    dataDir: path.resolve(optional(env, 'GATEHOUSE_DATA_DIR') ?? '.gatehouse'),
    databaseUrl,
    databaseSchema: parseDatabaseSchema(optional(env, 'DATABASE_SCHEMA'), databaseUrl),
    redisUrl: parseRedisUrl(optional(env, 'REDIS_URL')),
    redisPrefix: parseRedisPrefix(optional(env, 'GATEHOUSE_REDIS_PREFIX')),
    platformKey: parsePlatformKey(optional(env, 'GATEHOUSE_PLATFORM_KEY')),
    instanceSecret: parseSecret(optional(env, 'GATEHOUSE_SECRET')),
    smtpUrl: parseSmtpUrl(optional(env, 'SMTP_URL')),
    smtpFrom: parseSmtpFrom(optional(env, 'SMTP_FROM'), baseUrl),
    emailWorker: parseOnOff('GATEHOUSE_EMAIL_WORKER', optional(env, 'GATEHOUSE_EMAIL_WORKER'), true),
    logLevel: parseLogLevel(optional(env, 'LOG_LEVEL')),
    s3: parseS3(env),
    trustProxy: parseTrustProxy(optional(env, 'TRUST_PROXY')),
    auditRetentionDays: parseAuditRetention(optional(env, 'AUDIT_RETENTION_DAYS')),
    metrics: parseMetrics(env, port, host),
    otel: parseOtel(env),
  };
}
