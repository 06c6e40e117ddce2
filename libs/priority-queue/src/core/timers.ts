/**
 * Milliseconds on a clock that only goes forward: what the worker keeps its leases by. The wall
 * clock (Date.now()) can be stepped (an NTP correction, a VM resumed, an operator): stepped back,
 * a worker would think its lease younger than it is, renew it late and run its handler on past
 * the lease's end, beside the worker the recovery gave the task to.
 */
export function monotonicNow(): number {
  return performance.now();
}

/** Longest period a Node.js timer takes: a longer one fires after 1 ms. */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * Where the worker's timers live. The default uses Node timers; the Nest shell registers them in
 * @nestjs/schedule's SchedulerRegistry so they show up (and are removed) with the app's others.
 */
export interface TimerHost {
  addInterval(name: string, fn: () => void, ms: number): void;
  addTimeout(name: string, fn: () => void, ms: number): void;
  remove(name: string): void;
}

export class NodeTimerHost implements TimerHost {
  private readonly intervals = new Map<string, NodeJS.Timeout>();
  private readonly timeouts = new Map<string, NodeJS.Timeout>();

  addInterval(name: string, fn: () => void, ms: number): void {
    this.remove(name);
    this.intervals.set(name, setInterval(fn, ms));
  }

  addTimeout(name: string, fn: () => void, ms: number): void {
    this.remove(name);
    const t = setTimeout(() => {
      this.timeouts.delete(name);
      fn();
    }, ms);
    this.timeouts.set(name, t);
  }

  remove(name: string): void {
    const i = this.intervals.get(name);
    if (i) clearInterval(i), this.intervals.delete(name);
    const t = this.timeouts.get(name);
    if (t) clearTimeout(t), this.timeouts.delete(name);
  }
}

/**
 * How long one step of a shutdown waits for a store that does not answer (Worker.stop's
 * hand-backs, at most leaseMs; each step of the module's shutdown; a store's close() for its
 * batched writes still out). Then it goes on: leases expire and the recovery takes over.
 */
export const SHUTDOWN_WAIT_MS = 5_000;

/**
 * Waits for `work` at most `ms`: true when it settled in time (resolved or rejected; a rejection
 * is the caller's to handle on `work` itself), false when the time ran out. The timer does not
 * keep the process alive. For shutdowns, which must not hang on a store that does not answer.
 */
export async function settledWithin(work: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(false), Math.max(0, Math.min(ms, MAX_TIMER_MS)));
    timer.unref();
  });
  try {
    return await Promise.race([work.then(() => true, () => true), late]);
  } finally {
    clearTimeout(timer);
  }
}
