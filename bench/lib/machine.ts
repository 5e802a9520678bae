import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import os from 'node:os';

/** What the numbers were measured on: printed once at the top of every run. */
export function machineLine(): string {
  const cpus = os.cpus();
  return `${cpus.length} cores (${cpus[0]?.model.trim() ?? 'unknown CPU'}), ${(os.totalmem() / 2 ** 30).toFixed(1)} GiB, ${os.platform()} ${os.release()}, Node ${process.version}`;
}

/** The load average before a round: a round measured on a busy machine says so. */
export function loadLine(): string {
  const [one, five] = os.loadavg();
  return `load ${one!.toFixed(2)} / ${five!.toFixed(2)}`;
}

/** utime + stime of a /proc `stat` file, in seconds; 0 once the process or thread is gone. */
function statSeconds(statPath: string): number {
  try {
    const stat = readFileSync(statPath, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
  } catch {
    return 0;
  }
}

/** CPU seconds used so far by process `pid`, all its threads (Linux; 0 elsewhere). */
export function pidCpuSeconds(pid: number): number {
  return statSeconds(`/proc/${pid}/stat`);
}

/** CPU seconds used so far by each thread of a process, keyed by thread id (empty once it exited). */
export function threadSeconds(pid: number): Map<number, number> {
  const threads = new Map<number, number>();
  let tids: string[];
  try {
    tids = readdirSync(`/proc/${pid}/task`);
  } catch {
    return threads;
  }
  for (const tid of tids) threads.set(Number(tid), statSeconds(`/proc/${pid}/task/${tid}/stat`));
  return threads;
}

/** The processes named `name` (their `comm`), e.g. every postgres backend. */
export function pidsNamed(name: string): number[] {
  let pids: string[];
  try {
    pids = readdirSync('/proc').filter((entry) => /^\d+$/.test(entry));
  } catch {
    return [];
  }
  return pids
    .filter((pid) => {
      try {
        return readFileSync(`/proc/${pid}/comm`, 'utf8').trim() === name;
      } catch {
        return false;
      }
    })
    .map(Number);
}

/** CPU seconds used so far by every process named `name` (Linux; 0 elsewhere): co-located services count too. */
export function processCpuSeconds(name: string): number {
  return pidsNamed(name).reduce((seconds, pid) => seconds + pidCpuSeconds(pid), 0);
}

/** The machine's CPU ticks so far, in all and idle (idle + iowait), from /proc/stat. */
export function machineTicks(): { total: number; idle: number } {
  const fields = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
  return { total: fields.reduce((a, b) => a + b, 0), idle: fields[3]! + fields[4]! };
}

// Linux's USER_HZ; /proc reports CPU time in these ticks.
const CLOCK_TICKS = Number(execFileSync('getconf', ['CLK_TCK']).toString().trim()) || 100;
