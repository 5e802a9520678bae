import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';

describe('configuration', () => {
  it('has working defaults for the embedded mode', () => {
    const config = loadConfig({});
    expect(config.port).toBe(4000);
    expect(config.baseUrl).toBe('http://localhost:4000');
    expect(config.dataDir).toBe(path.resolve('.gatehouse'));
    expect(config.databaseUrl).toBeUndefined();
    expect(config.redisUrl).toBeUndefined();
  });

  it('treats empty values as unset', () => {
    expect(loadConfig({ DATABASE_URL: '', PORT: ' ' }).databaseUrl).toBeUndefined();
  });

  it.each([
    ['PORT', 'eighty'],
    ['PORT', '70000'],
    ['GATEHOUSE_BASE_URL', 'not a url'],
    ['GATEHOUSE_BASE_URL', 'ftp://auth.example.com'],
    ['GATEHOUSE_BASE_URL', 'https://auth.example.com/?q=1'],
    ['DATABASE_URL', 'mysql://localhost/db'],
    ['REDIS_URL', 'localhost:6379'],
    ['DATABASE_SCHEMA', 'no_database_url'],
    ['GATEHOUSE_PLATFORM_KEY', 'short'],
    ['GATEHOUSE_PLATFORM_KEY', 'x'.repeat(40)],
    ['GATEHOUSE_SECRET', 'too-short'],
    ['LOG_LEVEL', 'loud'],
    ['DATABASE_SCHEMA', 'Bad-Name'],
    ['GATEHOUSE_REDIS_PREFIX', 'a{b}'],
    ['SMTP_URL', 'mail.example.com:25'],
    ['SMTP_FROM', 'Gatehouse <auth@example.com>'],
    ['GATEHOUSE_EMAIL_WORKER', 'yes'],
    ['METRICS_PORT', 'nine'],
    ['METRICS_PORT', '4000'],
    ['METRICS_HOST', '127.0.0.1'],
    ['OTEL_EXPORTER_OTLP_ENDPOINT', 'collector:4318'],
  ])('refuses %s=%s with one line naming the variable', (variable, value) => {
    let error: unknown;
    try {
      loadConfig({ [variable]: value });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).message.startsWith(`${variable}: `)).toBe(true);
    expect((error as ConfigError).message).not.toContain('\n');
  });

  it('takes a PostgreSQL schema only with a PostgreSQL URL, and only a plain name', () => {
    const url = 'postgres://localhost/db';
    expect(loadConfig({ DATABASE_URL: url, DATABASE_SCHEMA: 'tenant_a' }).databaseSchema).toBe('tenant_a');
    expect(() => loadConfig({ DATABASE_URL: url, DATABASE_SCHEMA: 'a; drop table x' })).toThrow(/^DATABASE_SCHEMA: /);
  });

  it('reads the Redis prefix', () => {
    expect(loadConfig({}).redisPrefix).toBe('gh:');
    expect(loadConfig({ GATEHOUSE_REDIS_PREFIX: 'staging:' }).redisPrefix).toBe('staging:');
    expect(() => loadConfig({ GATEHOUSE_REDIS_PREFIX: '{slot}' })).toThrow(/^GATEHOUSE_REDIS_PREFIX: /);
  });

  it('keeps a base URL path without a trailing slash', () => {
    expect(loadConfig({ GATEHOUSE_BASE_URL: 'https://example.com/auth/' }).baseUrl).toBe('https://example.com/auth');
  });

  it('reads the audit log retention: 365 days by default, 0 keeps every entry', () => {
    expect(loadConfig({}).auditRetentionDays).toBe(365);
    expect(loadConfig({ AUDIT_RETENTION_DAYS: '30' }).auditRetentionDays).toBe(30);
    expect(loadConfig({ AUDIT_RETENTION_DAYS: '0' }).auditRetentionDays).toBeNull();
    expect(() => loadConfig({ AUDIT_RETENTION_DAYS: 'a year' })).toThrow(/^AUDIT_RETENTION_DAYS: /);
    expect(() => loadConfig({ AUDIT_RETENTION_DAYS: '-1' })).toThrow(/^AUDIT_RETENTION_DAYS: /);
  });

  it('serves metrics only on a port of their own, by default on HOST', () => {
    expect(loadConfig({}).metrics).toBeUndefined();
    expect(loadConfig({ METRICS_PORT: '9464', HOST: '10.0.0.5' }).metrics).toEqual({ port: 9464, host: '10.0.0.5' });
    expect(loadConfig({ METRICS_PORT: '9464', METRICS_HOST: '127.0.0.1' }).metrics).toEqual({ port: 9464, host: '127.0.0.1' });
    expect(() => loadConfig({ PORT: '9464', METRICS_PORT: '9464' })).toThrow(/^METRICS_PORT: .*PORT/);
  });

  it('reads the standard OpenTelemetry variables', () => {
    expect(loadConfig({}).otel).toBeUndefined();
    expect(loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/' }).otel).toEqual({
      endpoint: 'http://collector:4318',
      protocol: 'http/protobuf',
      serviceName: 'gatehouse',
    });
    const json = loadConfig({
      OTEL_EXPORTER_OTLP_ENDPOINT: 'https://otel.example.com',
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_SERVICE_NAME: 'auth',
    });
    expect(json.otel).toMatchObject({ protocol: 'http/json', serviceName: 'auth' });
    expect(() => loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' })).toThrow(
      /^OTEL_EXPORTER_OTLP_PROTOCOL: /,
    );
  });
});
