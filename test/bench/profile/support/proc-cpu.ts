import { readdirSync, readFileSync } from 'node:fs';

/** µs per clock tick of /proc/<pid>/stat (CLK_TCK = 100 on Linux). */
export const TICK_US = 1_000_000 / 100;

/**
 * A process's parent and CPU ticks: utime + stime, plus cutime + cstime (its children that exited
 * and were waited for: a PostgreSQL backend that ends mid-run is counted in the postmaster's).
 */
export function procTicks(pid: number): { ppid: number; ticks: number } | null {
  try {
    const s = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = s.slice(s.lastIndexOf(')') + 2).split(' ');
    // after "(comm) ": state(0) ppid(1) ... utime(11) stime(12) cutime(13) cstime(14)
    return { ppid: Number(f[1]), ticks: Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14]) };
  } catch {
    return null;
  }
}

/** Ticks per pid of `root` and its children (the postmaster and its backends, autovacuum...). */
export function treeTicks(root: number): Map<number, number> {
  const out = new Map<number, number>();
  for (const name of readdirSync('/proc')) {
    const pid = Number(name);
    if (!Number.isInteger(pid)) continue;
    const p = procTicks(pid);
    if (p && (pid === root || p.ppid === root)) out.set(pid, p.ticks);
  }
  return out;
}

/** Ticks spent between two treeTicks() readings (a process born in between counts from zero). */
export function ticksBetween(a: Map<number, number>, b: Map<number, number>): number {
  let sum = 0;
  for (const [pid, t] of b) sum += t - (a.get(pid) ?? 0);
  return sum;
}
