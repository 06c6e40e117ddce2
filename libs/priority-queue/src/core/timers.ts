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
