import { performance } from 'node:perf_hooks';

/**
 * Wall-clock milliseconds with sub-millisecond resolution, comparable across the processes of one
 * machine (and with the store's clock: Redis TIME, SQL now()), for audits that order events of
 * several processes. Not `performance.timeOrigin + performance.now()`: timeOrigin is taken at
 * start-up and was measured here 0-32 ms off Date.now() in processes started together under load,
 * which made the chaos audits see overlaps that never happened. The offset from the monotonic
 * clock is calibrated against Date.now() instead: Date.now() is the true time floored to the ms,
 * so the largest Date.now() - performance.now() over many samples is within a few µs of the
 * true offset (never above it).
 */
function calibrate(): number {
  let best = -Infinity;
  for (let i = 0; i < 20_000; i++) {
    const p = performance.now();
    best = Math.max(best, Date.now() - p);
  }
  return best;
}

const offset = calibrate();

export function wallNow(): number {
  return offset + performance.now();
}
