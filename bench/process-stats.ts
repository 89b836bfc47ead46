// CPU time and resident memory of another process, from /proc (Linux).

import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

/** Kernel clock ticks per second, the unit of utime and stime in /proc/<pid>/stat. */
const CLOCK_TICKS_PER_SECOND = ((): number => {
  try {
    const ticks = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim());
    return Number.isFinite(ticks) && ticks > 0 ? ticks : 100;
  } catch {
    return 100;
  }
})();

/** User plus system CPU time the process (all its threads) has used, in microseconds. */
export function cpuMicroseconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // Fields after the parenthesised command name (which may hold spaces): state is field 3, utime 14, stime 15.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const ticks = Number(fields[11]) + Number(fields[12]);
  return (ticks * 1e6) / CLOCK_TICKS_PER_SECOND;
}

/** Resident set size (VmRSS) in bytes. */
export function residentBytes(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const match = /^VmRSS:\s+(\d+)\s+kB/m.exec(status);
  if (!match?.[1]) throw new Error(`no VmRSS for process ${pid}`);
  return Number(match[1]) * 1024;
}

/** Samples a process's RSS at a fixed interval and keeps the highest reading. */
export class PeakResidentSampler {
  #peak = 0;
  #timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly pid: number,
    private readonly intervalMs: number,
  ) {}

  start(): void {
    this.#sample();
    this.#timer = setInterval(() => this.#sample(), this.intervalMs);
  }

  /** Stops sampling; the peak in bytes. */
  stop(): number {
    clearInterval(this.#timer);
    this.#sample();
    return this.#peak;
  }

  #sample(): void {
    try {
      this.#peak = Math.max(this.#peak, residentBytes(this.pid));
    } catch {
      // the process has gone; the error surfaces in the phase that needed it
    }
  }
}
