import type { TaskStore, TimerHost, Transition } from '../../../libs/priority-queue/src/core';

/** What a CountingStore saw. */
export interface StoreCalls {
  /** Port calls per method name. */
  readonly by: Map<string, number>;
  /** Every port call. */
  total(): number;
  /** Sweeps that ran: recoverExpired calls, and sweepExpired calls that did not answer null. */
  readonly sweepsRun: Array<Transition[]>;
  /** sweepExpired calls answered null (another sweep's lease was live). */
  sweepsRefused: number;
  /** Wake-ups the store delivered that were dropped (dropWakes). */
  wakesDropped: number;
  /**
   * Resolves when `method` has been called and answered `n` times in all; 'sweep' counts the
   * answers of recoverExpired and sweepExpired together.
   */
  answered(method: string, n: number): Promise<void>;
}

/**
 * The real store behind a Proxy that counts its port calls (the store does all the work; only
 * counted). `dropWakes`: the listeners given to subscribe() are never called (a lost wake-up).
 */
export function countingStore(store: TaskStore, opts: { dropWakes?: boolean } = {}): { store: TaskStore; calls: StoreCalls } {
  const done = new Map<string, number>();
  const waiters: Array<{ method: string; n: number; resolve: () => void }> = [];
  const answered = (method: string) => {
    done.set(method, (done.get(method) ?? 0) + 1);
    for (const w of [...waiters]) {
      if (w.method === method && (done.get(method) ?? 0) >= w.n) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve();
      }
    }
  };
  const calls: StoreCalls = {
    by: new Map(),
    total: () => [...calls.by.values()].reduce((a, b) => a + b, 0),
    sweepsRun: [],
    sweepsRefused: 0,
    wakesDropped: 0,
    answered: (method, n) =>
      (done.get(method) ?? 0) >= n ? Promise.resolve() : new Promise<void>((resolve) => waiters.push({ method, n, resolve })),
  };
  const proxy = new Proxy(store, {
    get(target, prop, receiver) {
      const v = Reflect.get(target, prop, receiver);
      if (typeof v !== 'function' || typeof prop !== 'string') return v;
      return (...args: unknown[]) => {
        calls.by.set(prop, (calls.by.get(prop) ?? 0) + 1);
        if (prop === 'subscribe' && opts.dropWakes) {
          args = [() => void calls.wakesDropped++];
        }
        const out = (v as (...a: unknown[]) => unknown).apply(target, args);
        if (!(out instanceof Promise)) return out;
        return out.then(
          (r: unknown) => {
            if (prop === 'recoverExpired') calls.sweepsRun.push(r as Transition[]);
            if (prop === 'sweepExpired') {
              if (r === null) calls.sweepsRefused++;
              else calls.sweepsRun.push(r as Transition[]);
            }
            answered(prop);
            if (prop === 'recoverExpired' || prop === 'sweepExpired') answered('sweep');
            return r;
          },
          (e: unknown) => {
            answered(prop);
            throw e;
          },
        );
      };
    },
  });
  return { store: proxy, calls };
}

/** A TimerHost whose timers run only when a test fires them. */
export class ManualTimers implements TimerHost {
  private readonly fns = new Map<string, () => void>();

  addInterval(name: string, fn: () => void): void {
    this.fns.set(name, fn);
  }

  addTimeout(name: string, fn: () => void): void {
    this.fns.set(name, fn);
  }

  remove(name: string): void {
    this.fns.delete(name);
  }

  /** Runs the timer whose name ends with `:suffix` (e.g. 'recover'). */
  fire(suffix: string): void {
    for (const [name, fn] of this.fns) if (name.endsWith(`:${suffix}`)) fn();
  }
}
