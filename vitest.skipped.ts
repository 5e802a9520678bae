import type { Reporter, TestRunEndReason, Vitest } from 'vitest/node';

/**
 * What this run leaves out because a service is not configured. The lines are printed before the
 * run starts and again after its summary, where a reader of a long log looks.
 */
export function skippedSuites(env: Record<string, string | undefined>): string[] {
  const lines: string[] = [];
  if (!env.DATABASE_URL) {
    lines.push('[gatehouse] PostgreSQL suite SKIPPED: DATABASE_URL is unset. Set it to run every test on PostgreSQL too.');
  }
  if (!env.REDIS_URL) lines.push('[gatehouse] Redis tests SKIPPED: REDIS_URL is unset.');
  return lines;
}

/** Repeats the skipped-suite lines after the summary of the reporters listed before it. */
export class SkippedSuitesReporter implements Reporter {
  private vitest: Vitest | undefined;
  constructor(private readonly lines: readonly string[]) {}

  onInit(vitest: Vitest): void {
    this.vitest = vitest;
  }

  onTestRunEnd(_modules: unknown, _errors: unknown, _reason: TestRunEndReason): void {
    if (this.lines.length === 0) return;
    const write = (line: string) => (this.vitest ? this.vitest.logger.log(line) : process.stdout.write(`${line}\n`));
    write('');
    for (const line of this.lines) write(line);
    write('');
  }
}
