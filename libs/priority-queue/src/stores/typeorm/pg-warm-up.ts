import { createHash, randomUUID } from 'node:crypto';
import type { DataSource } from 'typeorm';
import { fenceOf, TaskStatus, type NewTask } from '../../core/task';
import type { ClaimRequest } from '../../core/task-store.port';
import { claimSubmissionsPg } from './claim-submissions.pg';
import { StoreContext } from './context';
import { Db } from './db';
import { PgDirect, type PgPool } from './pg-direct';
import { CompleteBatcher } from './sql/complete-batch';
import { claimPolls } from './sql/claim-polls';
import { insertTasksPg } from './sql/insert-tasks.pg';

interface PooledClient extends PgPool {
  release(destroy?: boolean | Error): void;
  on(event: 'error', fn: (e: Error) => void): unknown;
  removeListener(event: 'error', fn: (e: Error) => void): unknown;
}

/**
 * A client checked out of the pool, with a listener for its 'error' event while it is out (pg-pool
 * listens only to idle clients: a checked-out client's lost connection, a server restart, would
 * be an uncaught 'error' event); `give()` hands it back, destroyed if its connection failed.
 */
class Borrowed {
  private failure: Error | undefined;
  private readonly onError = (e: Error) => void (this.failure ??= e);

  constructor(readonly client: PooledClient) {
    client.on('error', this.onError);
  }

  give(failure?: Error): void {
    this.client.removeListener('error', this.onError);
    this.client.release(failure ?? this.failure);
  }
}

interface PgPoolState {
  connect(): Promise<PooledClient>;
  readonly totalCount: number;
  readonly idleCount: number;
  readonly waitingCount: number;
  readonly options: { max?: number; min?: number; idleTimeoutMillis?: number };
}

/**
 * A queue name no store can have (a control character fails core/validation isKey): the
 * warm-up's task lives there, under its own advisory lock keys, so it never meets a real task or
 * waits for a real claim's lock.
 */
const WARM_QUEUE = '\u0001warm-up';

/**
 * PostgreSQL's cold start, per pooled connection: opening it (~30 ms with SCRAM), then the first
 * call of each hot statement on its backend: PL/pgSQL compiles `<prefix>claim` and
 * `<prefix>complete_leased` and plans their statements, the server parses and plans the insert
 * (PgDirect's named statements are prepared per connection), ~20-120 ms each on a loaded host.
 * A worker that meets a burst on a pool that opens connections on demand pays that on the first
 * tasks, and the wait makes the pool open more connections, all cold.
 *
 * warm(n) checks out n connections at once (so they are n distinct backends; opened if the pool
 * has fewer) and runs on each, once per connection, a task's whole life: insert, claim, complete,
 * poll claim, in a transaction that is ROLLED BACK, in a queue of its own (WARM_QUEUE): nothing
 * it writes is ever visible, it takes no lock a real call waits for, and the function compiles,
 * plans and prepared statements it leaves behind are the ones the store's calls use. A connection
 * already warmed is only checked out and back (no round trip), which also restarts the pool's idle
 * timer on it.
 */
export class PgWarmUp {
  private readonly warmed = new WeakSet<object>();

  constructor(
    private readonly dataSource: DataSource,
    /** The store's context: its tables and the settings its statement texts depend on. */
    private readonly ctx: StoreContext,
  ) {}

  /** Connections warm-up can take at once: at most `calls`, and one less than the pool's size, so another call always finds one. */
  size(calls: number): number {
    const max = this.pool().options.max ?? 10;
    return Math.max(1, Math.min(Math.floor(calls), max > 1 ? max - 1 : 1));
  }

  /** How often the worker should call warm() again so the pool's idle timeout drops none of them (0: never needed). */
  refreshMs(calls: number): number {
    const o = this.pool().options;
    const idle = o.idleTimeoutMillis ?? 10_000;
    return idle > 0 && (o.min ?? 0) < this.size(calls) ? Math.max(100, Math.floor(idle / 2)) : 0;
  }

  /**
   * Warms up to size(calls) pooled connections; returns how many it ran the hot statements on
   * (the others were warm). `onlyIdle`: take only what the pool has idle or may still open
   * without waiting (a refresh while the application works), none when calls are waiting.
   */
  async warm(calls: number, onlyIdle = false): Promise<number> {
    const pool = this.pool();
    let n = this.size(calls);
    if (onlyIdle) {
      if (pool.waitingCount > 0) return 0;
      n = Math.min(n, pool.idleCount + Math.max(0, (pool.options.max ?? 10) - pool.totalCount));
    }
    // all n asked for in one synchronous burst: pg-pool serves waiting connects first come,
    // first served, so two warm-ups on one pool (two queues' workers starting together) never
    // each hold part of it while waiting for the other's part
    const taken = await Promise.allSettled(Array.from({ length: n }, () => pool.connect().then((c) => new Borrowed(c))));
    const clients = taken.flatMap((t) => (t.status === 'fulfilled' ? [t.value] : []));
    const cold = clients.filter((b) => !this.warmed.has(b.client));
    for (const b of clients) if (this.warmed.has(b.client)) b.give();
    const runs = await Promise.allSettled(cold.map((b, i) => this.warmOne(b, i)));
    const failed = runs.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    const lost = taken.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed || lost) throw (failed ?? lost)!.reason;
    return cold.length;
  }

  private async warmOne(borrowed: Borrowed, i: number): Promise<void> {
    const client = borrowed.client;
    let broken: Error | undefined;
    try {
      await client.query({ text: 'BEGIN' });
      try {
        const c = this.context(client, i);
        const task = warmTask();
        await insertTasksPg(c, [task], [null], true); // its NOTIFY is dropped with the rollback
        const req: ClaimRequest = { owner: WARM_QUEUE, limit: 1, leaseMs: 60_000 };
        const claimed = (await claimSubmissionsPg(c, req)).claimed[0];
        if (claimed) await new CompleteBatcher(c).complete(fenceOf(claimed), { status: TaskStatus.SUCCEEDED, result: null });
        await claimPolls(c, req);
      } finally {
        await client.query({ text: 'ROLLBACK' });
      }
      this.warmed.add(client);
    } catch (e) {
      broken = e as Error;
      throw e;
    } finally {
      borrowed.give(broken);
    }
  }

  /** The store's context on `client`, in the warm-up's queue (its own lock keys per connection). */
  private context(client: PooledClient, i: number): StoreContext {
    const s = this.ctx;
    const queue = `${WARM_QUEUE}:${i}`;
    const h = createHash('sha1').update(`${s.t.prefix}\u0000${queue}`).digest();
    const db = new Db(this.dataSource, s.d, queue, [h.readInt32BE(0), h.readInt32BE(4)]);
    const c = new StoreContext(db, s.d, s.t, queue, s.aging, s.clock, s.channel, new PgDirect(this.dataSource, client));
    c.fair = s.fair;
    c.historyLimit = s.historyLimit;
    return c;
  }

  private pool(): PgPoolState {
    const pool = (this.dataSource.driver as unknown as { master?: PgPoolState }).master;
    if (!pool) throw new Error('the DataSource has no PostgreSQL pool: is it initialized?');
    return pool;
  }
}

function warmTask(): NewTask {
  return {
    id: `${WARM_QUEUE}:${randomUUID()}`,
    idempotencyKey: null,
    type: WARM_QUEUE,
    payload: null,
    priority: 0,
    providerKey: WARM_QUEUE,
    accountId: null,
    tenantId: null,
    concurrencyKey: null,
    delayMs: 0,
    timeoutMs: null,
    maxAttempts: 1,
    idempotent: true,
  };
}
