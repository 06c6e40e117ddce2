import type { Fairness } from './fairness';
import type { TaskStore } from './task-store.port';

/** Marks a StoreBackend (so that module options can tell it from a TaskStore or a config object). */
export const STORE_BACKEND = Symbol.for('nestjs-priority-queue:store-backend');

export interface QueueStoreOptions {
  /** DESIGN §2 aging of this queue; fixed for the queue's life. */
  agingIntervalMs?: number;
  /** DESIGN §7 fair share between tenants of this queue; fixed for the queue's life. */
  fairness?: Fairness | null;
}

/**
 * Where the queues of an application live: one memory space, one Redis, one TypeORM DataSource.
 * Made by `memoryStore()`, `redisStore()` (nestjs-priority-queue/redis) or `typeormStore()`
 * (nestjs-priority-queue/typeorm); the module builds one TaskStore per queue from it.
 *
 * A backend may serve several applications of one process (a producer app and a worker app in a
 * test): `open()` and `close()` are counted, and what the backend opened itself (a Redis
 * connection made from a URL) is closed at the last `close()`. A connection the app passed in is
 * never closed.
 */
export interface StoreBackend {
  readonly [STORE_BACKEND]: true;
  /** `memory`, `redis`, `typeorm` or a name of your own. */
  readonly kind: string;
  /** For messages and health details, e.g. `Redis at 127.0.0.1:6379`. */
  describe(): string;
  /**
   * @internal Called by the module once per application before its stores' init(): waits for the server when it is not
   * reachable yet (Redis: up to initTimeoutMs, logging what it waits for through `log`).
   */
  open(log?: (message: string) => void): Promise<void>;
  /** @internal The store of one queue (`queue` is its name inside the backend). */
  store(queue: string, options: QueueStoreOptions): TaskStore;
  /** @internal The application is done with a store it got from store(). */
  release(store: TaskStore): Promise<void>;
  /** @internal Undoes one open(); the last one closes what the backend opened itself. */
  close(): Promise<void>;
}

export function isStoreBackend(value: unknown): value is StoreBackend {
  return typeof value === 'object' && value !== null && (value as Partial<StoreBackend>)[STORE_BACKEND] === true;
}

/**
 * Counts the applications that opened a backend: `first` runs on the first open, `last` on the
 * close that balances it. An open whose `first` fails leaves the count as it was (and runs `last`
 * when nothing else holds the backend, so a connection made for nothing is closed).
 */
export class OpenCount {
  private count = 0;
  private opening: Promise<void> | null = null;

  constructor(
    private readonly first: () => Promise<void>,
    private readonly last: () => Promise<void>,
  ) {}

  async open(): Promise<void> {
    this.count++;
    try {
      if (this.count === 1 || this.opening) await (this.opening ??= this.first().finally(() => (this.opening = null)));
    } catch (e) {
      this.count--;
      if (this.count === 0) await this.last().catch(() => undefined);
      throw e;
    }
  }

  async close(): Promise<void> {
    if (this.count === 0) return;
    if (--this.count === 0) await this.last();
  }
}
