import { readdirSync, readFileSync } from 'node:fs';

/**
 * CPU ms used so far by a PostgreSQL server: utime + stime of the postmaster and of every
 * process it forked (backends, background workers), read from /proc (Linux; 10 ms ticks).
 * Backends that exited meanwhile drop out of the sum: compare readings over windows in which the
 * connections stay open.
 */
export function serverCpuMs(postmaster: number): number {
  let sum = 0;
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const f = readFileSync(`/proc/${d}/stat`, 'utf8');
      const rest = f.slice(f.lastIndexOf(')') + 2).split(' ');
      if (Number(rest[1]) !== postmaster && Number(d) !== postmaster) continue;
      sum += (Number(rest[11]) + Number(rest[12])) * 10; // USER_HZ = 100
    } catch {
      /* exited meanwhile */
    }
  }
  return sum;
}

/** The postmaster of a backend (its parent process). */
export function postmasterOf(backendPid: number): number {
  return Number(readFileSync(`/proc/${backendPid}/stat`, 'utf8').split(') ')[1].split(' ')[1]);
}
