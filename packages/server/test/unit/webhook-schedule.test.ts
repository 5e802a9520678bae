import { describe, expect, it } from 'vitest';
import { endpointUrlProblem, isNonPublicAddress } from '../../src/lib/addresses.js';
import { parseRetryAfter } from '../../src/webhooks/sender.js';
import { RETRY_SCHEDULE_MS, retryDelayMs } from '../../src/webhooks/worker.js';

describe('webhook retry schedule', () => {
  it('is 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 14 h, 20 h, 24 h, then no retry', () => {
    expect(RETRY_SCHEDULE_MS.map((ms) => ms / 1000)).toEqual([5, 300, 1800, 7200, 18000, 36000, 50400, 72000, 86400]);
    expect(retryDelayMs(10, undefined)).toBeUndefined();
  });

  it('jitters each delay by at most ±20 %', () => {
    RETRY_SCHEDULE_MS.forEach((base, i) => {
      expect(retryDelayMs(i + 1, undefined, () => 0)).toBe(base * 0.8);
      expect(retryDelayMs(i + 1, undefined, () => 0.5)).toBe(base);
      expect(retryDelayMs(i + 1, undefined, () => 0.999999)).toBeLessThanOrEqual(base * 1.2);
    });
  });

  it('waits at least as long as Retry-After asks, up to the longest step', () => {
    expect(retryDelayMs(1, 120_000, () => 0.5)).toBe(120_000);
    expect(retryDelayMs(1, 1_000, () => 0.5)).toBe(5_000);
    expect(retryDelayMs(1, 10 * 86_400_000, () => 0.5)).toBe(86_400_000);
    expect(parseRetryAfter('30', 0)).toBe(30_000);
    expect(parseRetryAfter(new Date(60_000).toUTCString(), 0)).toBe(60_000);
    expect(parseRetryAfter('soon', 0)).toBeUndefined();
  });
});

describe('webhook addresses', () => {
  it.each([
    '127.0.0.1',
    '10.0.0.1',
    '172.31.255.255',
    '192.168.0.1',
    '169.254.169.254',
    '100.64.0.1',
    '0.0.0.0',
    '::1',
    '::',
    'fe80::1',
    'fd12::1',
    '::ffff:10.0.0.1',
    '::ffff:7f00:1',
    '::7f00:1',
    '::127.0.0.1',
    '64:ff9b::a00:1',
    '64:ff9b:1::1',
    '2002:7f00:1::1',
    '2001:0:4136:e378::1',
  ])('%s is not public', (address) => expect(isNonPublicAddress(address)).toBe(true));
  it.each(['93.184.216.34', '8.8.8.8', '172.32.0.1', '2606:2800:220:1:248:1893:25c8:1946', '::ffff:5db8:d822', '2002:5db8:d822::1'])('%s is public', (address) =>
    expect(isNonPublicAddress(address)).toBe(false),
  );
  it('allows http only to localhost and 127.0.0.1 in development', () => {
    expect(endpointUrlProblem('http://localhost:3000/x', 'development')).toBeUndefined();
    expect(endpointUrlProblem('http://127.0.0.1:3000/x', 'development')).toBeUndefined();
    expect(endpointUrlProblem('http://10.0.0.1:3000/x', 'development')).toBeDefined();
    expect(endpointUrlProblem('http://localhost:3000/x', 'production')).toBeDefined();
  });
});
