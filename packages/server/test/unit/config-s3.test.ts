import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';

const S3 = {
  S3_ENDPOINT: 'https://s3.eu-west-1.amazonaws.com',
  S3_BUCKET: 'gatehouse-assets',
  S3_REGION: 'eu-west-1',
  S3_ACCESS_KEY_ID: 'AKIAEXAMPLE',
  S3_SECRET_ACCESS_KEY: 'secret',
  S3_PUBLIC_BASE_URL: 'https://assets.example.com/',
};

function errorOf(env: Record<string, string>): ConfigError {
  try {
    loadConfig(env);
  } catch (error) {
    return error as ConfigError;
  }
  throw new Error('expected a configuration error');
}

describe('object storage configuration', () => {
  it('is the filesystem store when no S3_* variable is set', () => {
    expect(loadConfig({}).s3).toBeUndefined();
  });

  it('reads a complete S3 configuration', () => {
    expect(loadConfig(S3).s3).toEqual({
      endpoint: 'https://s3.eu-west-1.amazonaws.com',
      bucket: 'gatehouse-assets',
      region: 'eu-west-1',
      accessKeyId: 'AKIAEXAMPLE',
      secretAccessKey: 'secret',
      publicBaseUrl: 'https://assets.example.com',
    });
  });

  it.each(Object.keys(S3))('refuses a partial configuration without %s, naming it', (missing) => {
    const error = errorOf({ ...S3, [missing]: '' });
    expect(error).toBeInstanceOf(ConfigError);
    expect(error.message.startsWith(`${missing}: is required`)).toBe(true);
    expect(error.message).not.toContain('\n');
  });

  it.each([
    ['S3_ENDPOINT', 'not a url'],
    ['S3_ENDPOINT', 'https://s3.example.com/some/path'],
    ['S3_BUCKET', 'Bad_Bucket'],
    ['S3_REGION', 'EU WEST'],
    ['S3_PUBLIC_BASE_URL', 'http://assets.example.com'],
    ['S3_PUBLIC_BASE_URL', 'ftp://assets.example.com'],
  ])('refuses %s=%s with one line naming the variable', (variable, value) => {
    const error = errorOf({ ...S3, [variable]: value });
    expect(error).toBeInstanceOf(ConfigError);
    expect(error.message.startsWith(`${variable}: `)).toBe(true);
    expect(error.message).not.toContain('\n');
  });

  it('allows a plain-http public base URL on a loopback host, for local development', () => {
    expect(loadConfig({ ...S3, S3_PUBLIC_BASE_URL: 'http://127.0.0.1:9000/bucket' }).s3?.publicBaseUrl).toBe(
      'http://127.0.0.1:9000/bucket',
    );
  });
});
