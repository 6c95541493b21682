import { readFileSync } from 'node:fs';

/**
 * Resident set size of the bench's server processes, from /proc/<pid>/status (Linux):
 * VmRSS is the current RSS, VmHWM its high-water mark since the process started. Without
 * /proc (or once the process is gone) the readings are undefined.
 */

export interface MemoryReading {
  /** VmRSS, MB. */
  rssMb: number;
  /** VmHWM (peak RSS since the process started), MB. */
  hwmMb: number;
}

const MB = 1024; // /proc/<pid>/status gives kB

export function readMemory(pid: number): MemoryReading | undefined {
  let status: string;
  try {
    status = readFileSync(`/proc/${pid}/status`, 'utf8');
  } catch {
    return undefined;
  }
  const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1]);
  const [rss, hwm] = [kb('VmRSS'), kb('VmHWM')];
  if (!Number.isFinite(rss) || !Number.isFinite(hwm)) return undefined;
  return { rssMb: round(rss / MB), hwmMb: round(hwm / MB) };
}

const round = (mb: number) => Math.round(mb * 10) / 10;

/**
 * Polls the RSS of some processes every `everyMs` and keeps each one's maximum; a window
 * (`mark()` … `maxSince()`) gives the maximum over part of the bench, e.g. the mixed run.
 */
export class RssSampler {
  private readonly max = new Map<number, number>();
  private readonly windows = new Map<number, Map<number, number>>();
  private nextWindow = 0;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly pids: () => number[],
    private readonly everyMs = 200,
  ) {}

  start(): void {
    this.sample();
    this.timer = setInterval(() => this.sample(), this.everyMs);
    this.timer.unref();
  }

  stop(): void {
    this.sample();
    clearInterval(this.timer);
  }

  /** Starts a window; `maxSince(id)` gives each process's maximum RSS since. */
  mark(): number {
    const id = this.nextWindow++;
    this.windows.set(id, new Map());
    this.sample();
    return id;
  }

  maxSince(id: number, pid: number): number | undefined {
    this.sample();
    return this.windows.get(id)?.get(pid);
  }

  /** Maximum polled RSS (MB) of a process over the whole bench. */
  maxOf(pid: number): number | undefined {
    return this.max.get(pid);
  }

  private sample(): void {
    for (const pid of this.pids()) {
      const reading = readMemory(pid);
      if (!reading) continue;
      const keep = (map: Map<number, number>) => map.set(pid, Math.max(map.get(pid) ?? 0, reading.rssMb));
      keep(this.max);
      for (const window of this.windows.values()) keep(window);
    }
  }
}
