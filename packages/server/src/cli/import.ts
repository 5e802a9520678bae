/**
 * `npm run import -- --environment env_… --format clerk|supabase|csv <file>`: imports users from a
 * Clerk CSV export, a Supabase auth.users CSV dump or a plain CSV, through POST /v1/users/import,
 * with a progress bar. After each batch it records where it is in a state file beside the input, so
 * a run that was interrupted resumes where it stopped; rows sent twice are harmless anyway (the
 * import is idempotent on externalId, which every format fills from the source's user id).
 *
 * Credentials come from the environment, never the command line: GATEHOUSE_SECRET_KEY (the
 * environment's secret key), or GATEHOUSE_PLATFORM_KEY, with which the command makes a secret key
 * for the run and revokes it at the end. GATEHOUSE_URL is the server (default http://localhost:4000).
 */
import { createHash } from 'node:crypto';
import { appendFileSync, existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import type { ImportUsersResult } from '@gatehouse/contract';
import { csvRecords } from './csv.js';
import { checkHeader, FORMATS, mapRecord, type Format } from './import-formats.js';

const USAGE = `Usage: npm run import -- --environment env_… --format clerk|supabase|csv [--batch-size 500] [--restart] <file>

Environment variables:
  GATEHOUSE_URL           the server (default http://localhost:4000)
  GATEHOUSE_SECRET_KEY    the environment's secret key (sk_test_… or sk_live_…), or
  GATEHOUSE_PLATFORM_KEY  a platform key: a secret key is made for this run and revoked at its end`;

interface State {
  version: 1;
  environment: string;
  format: Format;
  sha256: string;
  /** Data rows (after the header) done: the next run starts at this one. */
  nextRow: number;
  created: number;
  existing: number;
  failed: number;
  skipped: number;
}

class UsageError extends Error {}

function options(argv: string[]) {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      environment: { type: 'string' },
      format: { type: 'string' },
      'batch-size': { type: 'string' },
      restart: { type: 'boolean' },
      help: { type: 'boolean' },
    },
  });
  if (values.help) throw new UsageError('');
  const environment = values.environment;
  if (!environment || !/^env_[0-9a-z]{26}$/.test(environment))
    throw new UsageError('--environment env_… is required (the environment to import into).');
  const format = values.format as Format;
  if (!FORMATS.includes(format)) throw new UsageError(`--format must be one of ${FORMATS.join(', ')}.`);
  if (positionals.length !== 1) throw new UsageError('Give exactly one file to import.');
  const batchSize = Number(values['batch-size'] ?? 500);
  if (!Number.isInteger(batchSize) || batchSize < 1 || batchSize > 1000) throw new UsageError('--batch-size must be 1 to 1000.');
  return { environment, format, file: positionals[0]!, batchSize, restart: values.restart ?? false };
}

/** One line, redrawn in place on a terminal; a line per batch otherwise (logs, CI). */
class Progress {
  private readonly started = Date.now();
  private readonly tty = process.stderr.isTTY === true;
  constructor(
    private readonly total: number,
    private readonly resumedAt: number,
  ) {}

  draw(done: number, state: State, final = false): void {
    const width = 30;
    const ratio = this.total === 0 ? 1 : done / this.total;
    const filled = Math.round(ratio * width);
    const seconds = (Date.now() - this.started) / 1000;
    const rate = seconds > 0 ? Math.round((done - this.resumedAt) / seconds) : 0;
    const line =
      `[${'#'.repeat(filled)}${'-'.repeat(width - filled)}] ${(ratio * 100).toFixed(0).padStart(3)}% ${done}/${this.total} rows` +
      ` · ${state.created} created, ${state.existing} already there, ${state.failed} failed, ${state.skipped} skipped · ${rate} rows/s`;
    if (this.tty) process.stderr.write(`\r${line}${final ? '\n' : ''}`);
    else process.stderr.write(`${line}\n`);
  }
}

async function request<T>(url: string, token: string, method: string, body?: unknown): Promise<T> {
  // Retried on what passes (a 429, a 5xx, a dropped connection); a 4xx is the caller's to fix.
  for (let attempt = 1; ; attempt++) {
    let response: Response | undefined;
    try {
      response = await fetch(url, {
        method,
        headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
    } catch (error) {
      if (attempt >= 5) throw new Error(`Cannot reach ${url}: ${(error as Error).message}`);
    }
    if (response && response.ok) return (response.status === 204 ? undefined : await response.json()) as T;
    if (response && response.status !== 429 && response.status < 500) {
      const text = await response.text();
      let message = text;
      try {
        message = (JSON.parse(text) as { error: { message: string } }).error.message;
      } catch {
        // not the error shape: show it as it came
      }
      throw new Error(`${method} ${url} answered ${response.status}: ${message}`);
    }
    if (attempt >= 5)
      throw new Error(`${method} ${url} kept failing (${response?.status ?? 'no answer'}); run the command again to resume.`);
    const retryAfter = Number(response?.headers.get('retry-after') ?? 0);
    await new Promise((resolve) => setTimeout(resolve, retryAfter > 0 ? retryAfter * 1000 : 500 * 2 ** attempt));
  }
}

/** The secret key to use, and what to do at the end (revoke a key made for this run). */
async function credential(baseUrl: string, environment: string): Promise<{ secretKey: string; done: () => Promise<void> }> {
  const secretKey = process.env.GATEHOUSE_SECRET_KEY;
  if (secretKey) return { secretKey, done: async () => {} };
  const platformKey = process.env.GATEHOUSE_PLATFORM_KEY;
  if (!platformKey) throw new UsageError('Set GATEHOUSE_SECRET_KEY (the environment’s secret key) or GATEHOUSE_PLATFORM_KEY.');
  const created = await request<{ id: string; secretKey: string }>(
    `${baseUrl}/v1/platform/environments/${environment}/secret-keys`,
    platformKey,
    'POST',
  );
  return {
    secretKey: created.secretKey,
    done: () => request(`${baseUrl}/v1/platform/environments/${environment}/secret-keys/${created.id}`, platformKey, 'DELETE'),
  };
}

function saveState(path: string, state: State): void {
  // Written whole then renamed: an interruption mid-write leaves the previous state, never half of one.
  writeFileSync(`${path}.tmp`, JSON.stringify(state, null, 2));
  renameSync(`${path}.tmp`, path);
}

export async function main(argv: string[]): Promise<number> {
  let opts: ReturnType<typeof options>;
  try {
    opts = options(argv);
  } catch (error) {
    if (!(error instanceof UsageError) && !(error instanceof TypeError)) throw error;
    if (error.message) process.stderr.write(`${error.message}\n\n`);
    process.stderr.write(`${USAGE}\n`);
    return error.message ? 2 : 0; // --help is not an error
  }
  const baseUrl = (process.env.GATEHOUSE_URL ?? 'http://localhost:4000').replace(/\/+$/, '');
  let content: Buffer;
  let parsed: ReturnType<typeof csvRecords>;
  try {
    content = readFileSync(opts.file);
    parsed = csvRecords(content.toString('utf8'));
  } catch (error) {
    process.stderr.write(`${opts.file}: ${(error as Error).message}\n`);
    return 2;
  }
  const sha256 = createHash('sha256').update(content).digest('hex');
  const { header, records } = parsed;
  const wrongHeader = checkHeader(opts.format, header);
  if (wrongHeader) {
    process.stderr.write(`${wrongHeader}\n`);
    return 2;
  }

  const statePath = `${opts.file}.import-state.json`;
  const errorsPath = `${opts.file}.import-errors.jsonl`;
  let state: State = {
    version: 1,
    environment: opts.environment,
    format: opts.format,
    sha256,
    nextRow: 0,
    created: 0,
    existing: 0,
    failed: 0,
    skipped: 0,
  };
  if (existsSync(statePath) && !opts.restart) {
    const saved = JSON.parse(readFileSync(statePath, 'utf8')) as State;
    if (saved.sha256 !== sha256 || saved.environment !== opts.environment || saved.format !== opts.format) {
      process.stderr.write(
        `${statePath} belongs to another run (a different file, environment or format). Pass --restart to start over, or delete it.\n`,
      );
      return 2;
    }
    state = saved;
    if (state.nextRow > 0) process.stderr.write(`Resuming at row ${state.nextRow + 1} of ${records.length} (${statePath}).\n`);
  }

  let key: Awaited<ReturnType<typeof credential>>;
  try {
    key = await credential(baseUrl, opts.environment);
  } catch (error) {
    process.stderr.write(`${(error as Error).message}\n`);
    return error instanceof UsageError ? 2 : 1;
  }
  const progress = new Progress(records.length, state.nextRow);
  let interrupted = false;
  const onSignal = () => {
    interrupted = true;
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  try {
    process.stderr.write(`Importing ${records.length} rows (${opts.format}) into ${opts.environment} at ${baseUrl}\n`);
    while (state.nextRow < records.length && !interrupted) {
      const start = state.nextRow;
      const slice = records.slice(start, start + opts.batchSize);
      const users = [];
      const rowOf: number[] = [];
      const failures: object[] = [];
      for (const [offset, record] of slice.entries()) {
        const mapped = mapRecord(opts.format, record);
        if ('skip' in mapped) {
          state.skipped++;
          failures.push({ row: start + offset + 1, skipped: mapped.skip });
        } else {
          users.push(mapped.user);
          rowOf.push(start + offset + 1);
        }
      }
      if (users.length > 0) {
        const result = await request<ImportUsersResult>(`${baseUrl}/v1/users/import`, key.secretKey, 'POST', { users });
        for (const row of result.data) {
          if ('user' in row) {
            if (row.created) state.created++;
            else state.existing++;
          } else {
            state.failed++;
            const sent = users[row.index]!;
            failures.push({ row: rowOf[row.index], email: sent.email, externalId: sent.externalId ?? null, error: row.error });
          }
        }
      }
      if (failures.length > 0) appendFileSync(errorsPath, failures.map((f) => `${JSON.stringify(f)}\n`).join(''));
      state.nextRow = start + slice.length;
      saveState(statePath, state);
      progress.draw(state.nextRow, state);
    }
    progress.draw(state.nextRow, state, true);
    if (interrupted) {
      process.stderr.write(`Interrupted after row ${state.nextRow}; run the same command again to resume.\n`);
      return 130;
    }
    process.stderr.write(
      `Done: ${state.created} created, ${state.existing} already there, ${state.failed} failed, ${state.skipped} skipped.` +
        (state.failed + state.skipped > 0 ? ` Rows not imported, with the reason: ${errorsPath}` : '') +
        '\n',
    );
    return state.failed > 0 ? 1 : 0;
  } catch (error) {
    process.stderr.write(`\n${(error as Error).message}\nRun the same command again to resume at row ${state.nextRow + 1}.\n`);
    return 1;
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    await key.done().catch((error: Error) => process.stderr.write(`Could not revoke the secret key made for this run: ${error.message}\n`));
  }
}

process.exitCode = await main(process.argv.slice(2));
