/**
 * `npm run backup -- <file>`: a consistent copy of the embedded SQLite database, made while the
 * server runs, with SQLite's online backup (better-sqlite3's `.backup()`): pages are copied in
 * steps, and a write meanwhile restarts the copy of what it changed, so the file is the database as
 * it was at one commit. Reads GATEHOUSE_DATA_DIR as the server does. PostgreSQL deployments use
 * pg_dump (docs/operations.md). Restoring: stop the server, place the file as
 * $GATEHOUSE_DATA_DIR/gatehouse.db (removing gatehouse.db-wal and -shm), keep GATEHOUSE_SECRET.
 */
import { existsSync, renameSync, statSync } from 'node:fs';
import path from 'node:path';
import SQLite from 'better-sqlite3';

const USAGE = `Usage: npm run backup -- <file>

Copies the embedded database ($GATEHOUSE_DATA_DIR/gatehouse.db, default .gatehouse/gatehouse.db)
to <file> while the server runs. The file must not exist yet. For PostgreSQL (DATABASE_URL), use
pg_dump: see docs/operations.md.`;

function fail(message: string): never {
  process.stderr.write(`${message}\n`);
  process.exit(1);
}

async function main(): Promise<void> {
  const args = process.argv.slice(2).filter((a) => a !== '--');
  if (args.length !== 1 || args[0]!.startsWith('-')) fail(USAGE);
  if (process.env.DATABASE_URL?.trim()) {
    fail(
      'DATABASE_URL is set: this instance runs on PostgreSQL, which this command does not copy. Use pg_dump (docs/operations.md, "Backups").',
    );
  }
  const target = path.resolve(args[0]!);
  if (existsSync(target)) fail(`${target} already exists; name a new file (a backup never overwrites one).`);
  const dataDir = path.resolve(process.env.GATEHOUSE_DATA_DIR?.trim() || '.gatehouse');
  const source = path.join(dataDir, 'gatehouse.db');
  if (!existsSync(source)) fail(`No database at ${source}; set GATEHOUSE_DATA_DIR to the server's data directory.`);

  // Not read-only: a reader of a WAL database may need to create the -shm file. Writes nothing.
  const database = new SQLite(source, { fileMustExist: true });
  database.pragma('busy_timeout = 5000');
  // Written beside the target, then renamed: a file at the target's name is always a whole copy.
  const partial = `${target}.partial`;
  try {
    await database.backup(partial);
  } finally {
    database.close();
  }
  const copy = new SQLite(partial, { fileMustExist: true });
  try {
    const integrity = copy.pragma('integrity_check', { simple: true });
    if (integrity !== 'ok') fail(`The copy failed SQLite's integrity check (${String(integrity)}); ${partial} is left for inspection.`);
    // One file, with no -wal beside it: what a restore places.
    copy.pragma('journal_mode = DELETE');
  } finally {
    copy.close();
  }
  renameSync(partial, target);
  const megabytes = (statSync(target).size / 1_048_576).toFixed(1);
  process.stdout.write(
    `Backed up ${source} to ${target} (${megabytes} MB).\n` +
      'Restore with the same GATEHOUSE_SECRET (keys are sealed with it) and the objects directory; see docs/operations.md.\n',
  );
}

main().catch((error: unknown) => fail(`Backup failed: ${error instanceof Error ? error.message : String(error)}`));
