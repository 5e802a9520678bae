import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort, startServerProcess, stopServerProcess, type ServerProcess } from './helpers/process.js';

/**
 * The README's "Sign a user in" block, run as a newcomer would run it: against `npm start` on a
 * fresh data directory, with the keys the first start printed, each `curl` through bash. The
 * placeholders a reader copies by hand (`su_…`, `123456`, `eyJ…`) are filled from the answers
 * before, and each answer must have the status and the fields its `# →` line shows.
 */
const readme = readFileSync(new URL('../../../README.md', import.meta.url), 'utf8');

function signInBlock(): string {
  const section = readme.slice(readme.indexOf('## Sign a user in'));
  const block = /```sh\n([\s\S]*?)```/.exec(section)?.[1];
  if (!block) throw new Error('README.md has no sh block under "## Sign a user in"');
  return block;
}

interface Step {
  command: string;
  expectedStatus: number;
  expectedBody: string;
}

/** Each curl command (with its continuation lines) and the `# → status body` line after it. */
function stepsOf(block: string): { preamble: string[]; steps: Step[] } {
  const lines = block.split('\n');
  const preamble: string[] = [];
  const steps: Step[] = [];
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    if (!line.startsWith('curl ')) {
      if (steps.length === 0 && /^[A-Z]+=/.test(line)) preamble.push(line.replace(/\s+#.*$/, ''));
      continue;
    }
    let command = line;
    while (command.endsWith('\\')) command = `${command.slice(0, -1)} ${lines[++i]!.trim()}`;
    const arrow = /^# → (\d{3}) (.*)$/.exec(lines[i + 1] ?? '');
    if (!arrow) throw new Error(`README.md: no "# → status body" line after: ${command}`);
    steps.push({ command, expectedStatus: Number(arrow[1]), expectedBody: arrow[2]! });
  }
  return { preamble, steps };
}

/** The keys of the shown body whose values are literal (not elided with …): they must match. */
function literalFields(shown: string): Array<[string, string]> {
  return [...shown.matchAll(/"(\w+)":"([^"…]*)"/g)].map((m) => [m[1]!, m[2]!]);
}

describe('README: sign a user in, as written', () => {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'gatehouse-readme-'));
  let server: ServerProcess;
  let base: string;
  let publishableKey: string;
  let secretKey: string;

  beforeAll(async () => {
    // The README describes the embedded default, so this runs on SQLite whatever the project.
    const port = await freePort();
    server = await startServerProcess({ PORT: String(port), GATEHOUSE_DATA_DIR: dataDir });
    base = `http://localhost:${port}`;
    publishableKey = /Publishable key:\s+(pk_test_\S+)/.exec(server.output)![1]!;
    secretKey = /Secret key:\s+(sk_test_\S+)/.exec(server.output)![1]!;
  });

  afterAll(async () => {
    if (server) await stopServerProcess(server);
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('signs up with the emailed code, reads the user and signs in again', () => {
    const { preamble, steps } = stepsOf(signInBlock());
    expect(preamble).toEqual(['B=http://localhost:4000', 'PK=pk_test_…', 'SK=sk_test_…']);
    expect(steps.length).toBeGreaterThanOrEqual(4);
    const env = { ...process.env, B: base, PK: publishableKey, SK: secretKey };
    const filled: Record<string, string> = {};
    for (const step of steps) {
      let command = step.command;
      for (const [placeholder, value] of Object.entries(filled)) command = command.split(placeholder).join(value);
      const output = execFileSync('bash', ['-c', `${command} -w '\\n%{http_code}'`], { env, encoding: 'utf8' });
      const status = Number(output.slice(output.lastIndexOf('\n') + 1));
      const body = JSON.parse(output.slice(0, output.lastIndexOf('\n'))) as Record<string, unknown>;
      expect(status, `${command}\n${output}`).toBe(step.expectedStatus);
      const flat = JSON.stringify(body);
      for (const [key, value] of literalFields(step.expectedBody)) {
        if (key === 'text') continue; // the email's text is shown abridged
        expect(flat, `${key} in the answer to ${command}`).toContain(`"${key}":"${value}"`);
      }
      // What the reader copies into the next commands.
      if (typeof body.signUpId === 'string') filled['su_…'] = body.signUpId;
      const email = (body.data as Array<{ text: string }> | undefined)?.[0];
      if (email) filled['123456'] = /\b(\d{6})\b/.exec(email.text)![1]!;
      const session = body.session as { accessToken?: string } | undefined;
      if (session?.accessToken) filled['eyJ…'] = session.accessToken;
    }
    expect(Object.keys(filled).sort()).toEqual(['123456', 'eyJ…', 'su_…']);
  });
});
