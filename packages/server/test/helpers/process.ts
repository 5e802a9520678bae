import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { serverDir, serverProcessArgs } from './built-server.js';

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
    server.on('error', reject);
  });
}

export interface ServerProcess {
  child: ChildProcess;
  /** Everything the process printed so far. */
  output: string;
  /** Set when the process exited before it was ready. */
  exitCode: number | null;
}

/** Starts the built server as `npm start` does; resolves once it prints its banner, or when it exits. */
export function startServerProcess(env: Record<string, string>): Promise<ServerProcess> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, serverProcessArgs(), {
      cwd: serverDir,
      // NODE_OPTIONS as the build saw it: V8 refuses a code cache made under other flags (src/boot/loader.ts).
      env: {
        PATH: process.env.PATH ?? '',
        ...(process.env.NODE_OPTIONS ? { NODE_OPTIONS: process.env.NODE_OPTIONS } : {}),
        LOG_LEVEL: 'warn',
        ...env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const started: ServerProcess = { child, output: '', exitCode: null };
    const timer = setTimeout(() => reject(new Error(`server did not start:\n${started.output}`)), 20_000);
    const onData = (chunk: Buffer) => {
      started.output += chunk.toString();
      if (bannerPrinted(started.output)) {
        clearTimeout(timer);
        resolve(started);
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.on('exit', (code) => {
      clearTimeout(timer);
      started.exitCode = code;
      resolve(started);
    });
  });
}

/**
 * The banner is written last, after listen, and ends with a blank line. Fastify's JSON log lines
 * (LOG_LEVEL=info) are written by another stream and may land after it, so they are set aside here.
 */
function bannerPrinted(output: string): boolean {
  if (!output.includes('Gatehouse is running.')) return false;
  const withoutLogLines = output
    .split('\n')
    .filter((line) => !line.startsWith('{"level":'))
    .join('\n');
  return /\n\n$/.test(withoutLogLines);
}

export async function stopServerProcess(started: ServerProcess, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
  if (started.child.exitCode !== null || started.child.signalCode !== null) return;
  await new Promise<void>((resolve) => {
    started.child.once('exit', () => resolve());
    started.child.kill(signal);
  });
}
