import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';
import { lockMs, PASSWORD_ACCOUNT } from '../../src/ratelimit/throttle-policies.js';
import { clientSubject, SignInThrottle } from '../../src/ratelimit/throttle.js';

describe('throttle subjects', () => {
  it('counts an IPv4 client by its address, an IPv4-mapped one as IPv4, an IPv6 one by its /64', () => {
    expect(clientSubject('203.0.113.9')).toBe('203.0.113.9');
    expect(clientSubject('::ffff:203.0.113.9')).toBe('203.0.113.9');
    expect(clientSubject('2001:db8:1:2:3:4:5:6')).toBe('2001:db8:1:2::/64');
    expect(clientSubject('2001:0db8:0001:0002::9')).toBe('2001:db8:1:2::/64');
    expect(clientSubject('2001:db8::1')).toBe('2001:db8:0:0::/64');
    expect(clientSubject('::1')).toBe('0:0:0:0::/64');
  });
});

describe('lock lengths', () => {
  it('start at the free-th attempt, double, and stop at the cap', () => {
    const locks = Array.from({ length: 12 }, (_, i) => lockMs(PASSWORD_ACCOUNT, i + 1) / 60_000);
    expect(locks).toEqual([0, 0, 0, 0, 1, 2, 4, 8, 15, 15, 15, 15]);
    expect(lockMs(PASSWORD_ACCOUNT, 10_000)).toBe(PASSWORD_ACCOUNT.maxLockMs);
  });

  it('Retry-After never asks for more than the lock still needs', async () => {
    let now = 1_000_000;
    const throttle = new SignInThrottle({ clock: () => now });
    const subjects = [{ policy: PASSWORD_ACCOUNT, subject: 'a@example.com' }];
    for (let i = 0; i < PASSWORD_ACCOUNT.free; i++) await throttle.attempt('env_1', subjects, (s) => `${s}`);
    for (const [elapsed, expected] of [
      [0, 60],
      [1, 60],
      [999, 60],
      [1000, 59],
      [59_001, 1],
    ] as const) {
      now = 1_000_000 + elapsed;
      await expect(throttle.attempt('env_1', subjects, (s) => `${s}`)).rejects.toMatchObject({
        code: 'rate_limited',
        headers: { 'retry-after': String(expected) },
      });
    }
    now = 1_000_000 + 60_000;
    await expect(throttle.attempt('env_1', subjects, (s) => `${s}`)).resolves.toBeDefined();
  });
});

describe('TRUST_PROXY', () => {
  it('is unset by default: the socket peer is the client', () => {
    expect(loadConfig({}).trustProxy).toBeUndefined();
  });

  it('takes addresses, CIDR blocks and named ranges, separated by commas', () => {
    expect(loadConfig({ TRUST_PROXY: '10.0.0.0/8, 127.0.0.1,::1,fd00::/8,loopback' }).trustProxy).toEqual([
      '10.0.0.0/8',
      '127.0.0.1',
      '::1',
      'fd00::/8',
      'loopback',
    ]);
  });

  it.each(['true', '10.0.0.0/33', 'proxy.example.com', '10.0.0.1/8/8', '*', '10.0.0.1,,10.0.0.2'])('refuses %j, naming the variable', (value) => {
    expect(() => loadConfig({ TRUST_PROXY: value })).toThrow(ConfigError);
    expect(() => loadConfig({ TRUST_PROXY: value })).toThrow(/^TRUST_PROXY: .*list your proxies/);
  });
});
