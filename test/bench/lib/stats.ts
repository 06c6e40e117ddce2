import { performance } from 'node:perf_hooks';

export const nowMs = (): number => performance.now();

/** Nearest-rank percentile of an unsorted list (q in 0..1); NaN when empty. */
export function percentile(values: readonly number[], q: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[rank];
}

export function perSecond(count: number, elapsedMs: number): number {
  return elapsedMs > 0 ? (count * 1000) / elapsedMs : Number.POSITIVE_INFINITY;
}

export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

export function chunks<T>(items: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

/**
 * Resolves when `tick()` has been called `target` times; rejects after `timeoutMs` with how far
 * it got, so a stuck target fails its scenario instead of hanging the run.
 */
export class Countdown {
  count = 0;
  /** Set when the timeout (not a failure) ended the wait. */
  timedOut = false;
  private resolve!: () => void;
  private reject!: (e: Error) => void;
  readonly done: Promise<void>;
  private timer: NodeJS.Timeout | null = null;

  constructor(readonly target: number, private readonly timeoutMs: number, private readonly what: string) {
    this.done = new Promise<void>((res, rej) => {
      this.resolve = res;
      this.reject = rej;
    });
    this.done.catch(() => undefined);
    if (target <= 0) this.resolve();
  }

  /** Starts the timeout clock (call when the measured phase begins). */
  arm(): Promise<void> {
    if (!this.timer && this.count < this.target) {
      this.timer = setTimeout(
        () => {
          this.timedOut = true;
          this.reject(new Error(`${this.what}: only ${this.count} of ${this.target} after ${this.timeoutMs} ms`));
        },
        this.timeoutMs,
      );
      this.timer.unref();
    }
    return this.done;
  }

  /** Fails the wait at once (a worker process died, for instance). */
  fail(error: Error): void {
    if (this.timer) clearTimeout(this.timer);
    this.reject(error);
  }

  tick(n = 1): void {
    this.count += n;
    if (this.count >= this.target) {
      if (this.timer) clearTimeout(this.timer);
      this.resolve();
    }
  }
}
