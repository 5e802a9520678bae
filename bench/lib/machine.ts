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
