import { describe, expect, it } from 'vitest';
import config from '../../../../vitest.config.js';
import { skippedSuites, SkippedSuitesReporter } from '../../../../vitest.skipped.js';

describe('what npm test skipped, repeated after the summary', () => {
  it('names each suite whose service is not configured, and nothing when both are', () => {
    expect(skippedSuites({})).toEqual([
      expect.stringMatching(/PostgreSQL suite SKIPPED: DATABASE_URL is unset/),
      expect.stringMatching(/Redis tests SKIPPED: REDIS_URL is unset/),
    ]);
    expect(skippedSuites({ DATABASE_URL: 'postgres://db', REDIS_URL: 'redis://r' })).toEqual([]);
  });

  it('prints the lines when the run ends, after the default reporter', () => {
    const printed: string[] = [];
    const reporter = new SkippedSuitesReporter(['[gatehouse] PostgreSQL suite SKIPPED: test']);
    reporter.onInit({ logger: { log: (line: string) => printed.push(line) } } as never);
    reporter.onTestRunEnd([], [], 'passed');
    expect(printed).toContain('[gatehouse] PostgreSQL suite SKIPPED: test');

    const reporters = config.test?.reporters as unknown[];
    expect(reporters[0]).toBe('default');
    expect(reporters.at(-1)).toBeInstanceOf(SkippedSuitesReporter);
  });
});
