// What a bench reads about a process from /proc (Linux): memory and CPU time. CPU per message is
// the figure a shared machine does not distort much: throughput falls when another job takes the
// cores, the work each message costs does not.
import { readdirSync, readFileSync } from 'node:fs';

/** A value of /proc/<pid>/status in bytes (VmRSS, VmHWM). */
export function procStatus(pid: number, field: 'VmRSS' | 'VmHWM'): number {
  const m = new RegExp(`^${field}:\\s+(\\d+) kB$`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  if (!m) throw new Error(`no ${field} for ${pid}`);
  return Number(m[1]) * 1024;
}

/** CPU seconds (user + system) a process has used so far, from /proc/<pid>/stat (100 Hz ticks); 0 once it is gone. */
export function procCpu(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return 0;
  }
}

/** A process and its children now (a PostgreSQL postmaster and its backends: each backend is a group of its own). */
export function withChildren(parent: number): number[] {
  const pids = [parent];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      if (Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === parent) pids.push(Number(name));
    } catch {
      // gone meanwhile
    }
  }
  return pids;
}

/**
 * CPU seconds a set of processes used between `start()` and `stop()`; `members` is asked at both
 * ends (backends come and go): one started meanwhile counts whole, one gone by the end not at all.
 */
export class CpuMeter {
  readonly #members: () => number[];
  #start = new Map<number, number>();

  constructor(members: () => number[]) {
    this.#members = members;
  }

  start(): void {
    this.#start = new Map(this.#members().map((pid) => [pid, procCpu(pid)]));
  }

  /** Seconds used since `start` by the processes alive at either end. */
  stop(): number {
    let used = 0;
    for (const pid of this.#members()) used += procCpu(pid) - (this.#start.get(pid) ?? 0);
    return used;
  }
}
