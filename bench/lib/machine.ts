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

/** CPU seconds used so far by process `pid`, all its threads (Linux; 0 elsewhere). */
export function pidCpuSeconds(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
  } catch {
    return 0;
  }
}

/** CPU seconds used so far by every process named `name` (Linux; 0 elsewhere): co-located services count too. */
export function processCpuSeconds(name: string): number {
  let seconds = 0;
  let pids: string[];
  try {
    pids = readdirSync('/proc').filter((p) => /^\d+$/.test(p));
  } catch {
    return 0;
  }
  for (const pid of pids) {
    try {
      if (readFileSync(`/proc/${pid}/comm`, 'utf8').trim() !== name) continue;
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      seconds += (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
    } catch {
      // gone meanwhile
    }
  }
  return seconds;
}

// Linux's USER_HZ; /proc reports CPU time in these ticks.
const CLOCK_TICKS = 100;
