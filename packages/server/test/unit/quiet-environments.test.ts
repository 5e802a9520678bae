import { describe, expect, it } from 'vitest';
import { QuietEnvironments } from '../../src/webhooks/quiet-environments.js';

/** The worker's hint of environments without an enabled endpoint (webhooks/worker.ts wakes on the others). */
describe('QuietEnvironments', () => {
  const fanOut = (hint: QuietEnvironments, environmentId: string, endpoints: number) =>
    hint.found(environmentId, endpoints, hint.fanOutStarting());

  it('knows nothing of an environment no fan-out has seen', () => {
    expect(new QuietEnvironments().allQuiet(['env_a'])).toBe(false);
  });

  it('is quiet for an environment found without endpoints, for ten polls', () => {
    const hint = new QuietEnvironments();
    fanOut(hint, 'env_a', 0);
    for (let poll = 0; poll < 9; poll++) {
      hint.polled();
      expect(hint.allQuiet(['env_a']), `after ${poll + 1} polls`).toBe(true);
    }
    hint.polled();
    expect(hint.allQuiet(['env_a'])).toBe(false);
  });

  it('is quiet for a batch only when every environment of it is', () => {
    const hint = new QuietEnvironments();
    fanOut(hint, 'env_a', 0);
    fanOut(hint, 'env_b', 1);
    expect(hint.allQuiet(['env_a'])).toBe(true);
    expect(hint.allQuiet(['env_a', 'env_b'])).toBe(false);
    expect(hint.allQuiet(['env_a', 'env_c'])).toBe(false);
  });

  it('forgets the hint when a fan-out finds an endpoint, or one is created or changed on this node', () => {
    const hint = new QuietEnvironments();
    fanOut(hint, 'env_a', 0);
    fanOut(hint, 'env_a', 2);
    expect(hint.allQuiet(['env_a'])).toBe(false);
    fanOut(hint, 'env_a', 0);
    hint.endpointsChanged('env_a');
    expect(hint.allQuiet(['env_a'])).toBe(false);
  });

  it('is not set by a fan-out that read the endpoints before an endpoint changed', () => {
    const hint = new QuietEnvironments();
    const startedAt = hint.fanOutStarting();
    hint.endpointsChanged('env_a'); // committed while the fan-out was reading
    hint.found('env_a', 0, startedAt);
    expect(hint.allQuiet(['env_a'])).toBe(false);
    fanOut(hint, 'env_a', 0); // the next fan-out read after the change
    expect(hint.allQuiet(['env_a'])).toBe(true);
  });

  it('holds at most 10,000 environments, dropping the oldest', () => {
    const hint = new QuietEnvironments();
    for (let i = 0; i <= 10_000; i++) fanOut(hint, `env_${i}`, 0);
    expect(hint.allQuiet(['env_0'])).toBe(false);
    expect(hint.allQuiet(['env_1', 'env_10000'])).toBe(true);
  });
});
