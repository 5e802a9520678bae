import { afterEach, describe, expect, it, vi } from 'vitest';
import { newId } from '../../src/lib/crypto.js';

describe('newId', () => {
  afterEach(() => vi.restoreAllMocks());

  it('is the prefix and 26 Crockford base32 characters', () => {
    expect(newId('org')).toMatch(/^org_[0-9a-hjkmnp-tv-z]{26}$/);
  });

  it('sorts ids made in the same millisecond in the order they were made', () => {
    vi.spyOn(Date, 'now').mockReturnValue(Date.UTC(2030, 0, 1));
    const ids = Array.from({ length: 1000 }, () => newId('org'));
    expect(new Set(ids).size).toBe(ids.length);
    expect([...ids].sort()).toEqual(ids);
    expect(new Set(ids.map((id) => id.slice(4, 14))).size).toBe(1); // one millisecond, one time part
  });

  it('keeps sorting in creation order when the clock steps back', () => {
    const now = vi.spyOn(Date, 'now').mockReturnValue(Date.UTC(2031, 0, 1));
    const before = newId('sess');
    now.mockReturnValue(Date.UTC(2031, 0, 1) - 5000);
    const after = newId('sess');
    expect(after > before).toBe(true);
  });

  it('puts the new time in ids of a later millisecond', () => {
    const now = vi.spyOn(Date, 'now').mockReturnValue(Date.UTC(2032, 0, 1));
    const first = newId('user');
    now.mockReturnValue(Date.UTC(2032, 0, 1) + 1);
    const second = newId('user');
    expect(second.slice(5, 15)).not.toBe(first.slice(5, 15));
    expect(second > first).toBe(true);
  });
});
