import { performance } from 'node:perf_hooks';

/**
 * Wall-clock milliseconds with sub-millisecond resolution, comparable across the processes of one
 * machine (and with the store's clock: Redis TIME, SQL now()), for audits that order events of
 * several processes. Not `performance.timeOrigin + performance.now()`: in a chaos run a worker
 * process's audit was ~10 ms ahead of the store's own transition times (its handler "ended" after
 * the store had written the outcome), so its timeOrigin, taken at start-up, did not match the
 * monotonic clock's origin there. The offset from the monotonic clock is calibrated against
 * Date.now() instead, Date.now() read FIRST: Date.now() is the true time floored to the ms, and a
 * pause between the two reads only lowers a sample, so every sample of
 * Date.now() - performance.now() is at most the true offset, and the largest of many is within a
 * few µs of it. (Read the other way round, one pause of a loaded machine between the reads raises
 * the estimate by the whole pause: that put a process's clock ms ahead.)
 */
function calibrate(): number {
  let best = -Infinity;
  for (let i = 0; i < 20_000; i++) {
    const wall = Date.now();
    best = Math.max(best, wall - performance.now());
  }
  return best;
}

const offset = calibrate();

export function wallNow(): number {
  return offset + performance.now();
}
