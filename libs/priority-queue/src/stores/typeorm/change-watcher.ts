import type { StoreContext } from './context';
import { readChangeMarks, type ChangeMarks } from './sql/change-marks';

/**
 * Wake-ups from other processes on MySQL / MariaDB and SQLite, which have no LISTEN/NOTIFY:
 * while anyone is subscribed, the store reads its change marks (sql/change-marks.ts, one
 * statement) every `everyMs` and calls the listeners when a claim could find something new:
 * a task created anywhere, slots given back, a lane made ready (a limit raised, a provider
 * resumed), a poll or a cancel request due, a staged task due (a retry, a recovered task). Cost: one read per period per subscribed store,
 * whatever the number of workers on it; a write in another process is seen within one period
 * (the store's own writes wake its process at once, see LocalWakes). It reads durable state,
 * so it misses nothing that lasts: after a failed read, the next good one calls the listeners.
 */
export class ChangeWatcher {
  private readonly listeners = new Set<() => void>();
  private timer: NodeJS.Timeout | null = null;
  private last: ChangeMarks | null = null;
  private failed = false;
  private reading: Promise<void> | null = null;

  constructor(
    private readonly c: StoreContext,
    private readonly everyMs: number,
  ) {}

  /** Adds a listener; the first one starts the watch (after a first read, the baseline). */
  async add(listener: () => void): Promise<() => Promise<void>> {
    const own = () => listener();
    this.listeners.add(own);
    if (this.listeners.size === 1) {
      await this.read();
      this.schedule();
    }
    return async () => {
      this.listeners.delete(own);
      if (this.listeners.size === 0) this.stop();
    };
  }

  stop(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.last = null;
  }

  private schedule(): void {
    if (this.timer || this.listeners.size === 0) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      void this.read().finally(() => this.schedule());
    }, this.everyMs);
    this.timer.unref?.(); // the workers' own timers keep the process alive, not this one
  }

  private read(): Promise<void> {
    this.reading ??= (async () => {
      try {
        const now = await readChangeMarks(this.c);
        const before = this.last;
        const woke = this.failed || (before !== null && changed(before, now));
        this.last = now;
        this.failed = false;
        if (woke && this.listeners.size > 0) this.wakeAll();
      } catch {
        this.failed = this.last !== null; // before a first good read there is nothing to have missed
      }
    })().finally(() => (this.reading = null));
    return this.reading;
  }

  private wakeAll(): void {
    for (const l of [...this.listeners]) {
      try {
        l();
      } catch {
        /* a listener's error is its own */
      }
    }
  }
}

/** New tasks or releases, or a lane / a poll / a staged task that became ready since the last read. */
function changed(a: ChangeMarks, b: ChangeMarks): boolean {
  return b.seq !== a.seq || b.release !== a.release || (b.ready && !a.ready) || (b.poll && !a.poll) || (b.staged && !a.staged);
}
