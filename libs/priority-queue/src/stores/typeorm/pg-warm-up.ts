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

/**
 * A client checked out of `pool`, its 'error' listener set in pg-pool's callback itself: a
 * promise would set it a microtask later, and a server shutting down can send its last message
 * in the same read as the new connection's ReadyForQuery, an 'error' event on a client nobody
 * listens to (an uncaught exception).
 */
function borrow(pool: PgPoolState): Promise<Borrowed> {
  return new Promise((resolve, reject) => pool.connect((err, client) => (err || !client ? reject(err ?? new Error('no client')) : resolve(new Borrowed(client)))));
}

interface PgPoolState {
  connect(cb: (err: Error | undefined, client: PooledClient | undefined) => void): void;
  on(event: 'acquire' | 'release' | 'remove', fn: (client: unknown) => void): unknown;
  removeListener(event: 'acquire' | 'release' | 'remove', fn: (client: unknown) => void): unknown;
  readonly totalCount: number;
  readonly idleCount: number;
  readonly waitingCount: number;
  readonly options: { max?: number };
}

/**
 * A queue name no store can have (a control character fails core/validation isKey): the
 * warm-up's task lives there, under its own advisory lock keys, so it never meets a real task or
 * waits for a real claim's lock.
 */
const WARM_QUEUE = '\u0001warm-up';

/**
 * How long the pool must have been unused (no checkout, no release, nothing checked out, nobody
 * waiting) before a warm-up step takes a connection: a worker draining work or a producer
 * submitting every few ms keeps it busier than that, so the warm-up only uses idle time.
 */
const WARM_QUIET_MS = 25;

/**
 * Connections warmed side by side: a first call on a backend is server CPU (compiles, plans,
 * catalog reads), so more at once would not finish sooner on a small server, and would leave
 * less of it to work that arrives meanwhile.
 */
const WARM_AT_ONCE = 2;

/**
 * The gate of the warm-ups that open connections: a session advisory lock, one key for the whole
 * library, waited for (no round trips while waiting) up to 2 s, then the warm-up ends. Holding it,
 * a warm-up counts the server's connections and opens up to half its max_connections, so that
 * pools growing on demand in other processes still find free slots; warm-ups in many pools
 * starting together (32 workers, each with its own DataSource) would otherwise each count the
 * same free slots and together take them all.
 */
const GATE_KEY = '3741920557318404';
const GATE_SQL = `SELECT set_config('lock_timeout', '2000', true) AS timeout, pg_advisory_lock($1) AS locked`;
const ROOM_SQL = `SELECT current_setting('max_connections')::int / 2 - count(*)::int AS room FROM pg_stat_activity WHERE backend_type = 'client backend'`;

/**
 * PostgreSQL's cold start, per pooled connection: opening it (~30 ms with SCRAM), then the first
 * call of each hot statement on its backend: PL/pgSQL compiles `<prefix>claim` and
 * `<prefix>complete_leased` and plans their statements, the server parses and plans the insert
 * (PgDirect's named statements are prepared per connection), ~20-120 ms each on a loaded host.
 * A worker that meets a burst on a pool that opens connections on demand pays that on the first
 * tasks, and the wait makes the pool open more connections, all cold.
 *
 * The warm-up readies connections in the pool's idle time, in the background:
 * - a step runs only after the pool has been unused for WARM_QUIET_MS (nothing checked out, no
 *   caller waiting), so it never holds up a worker's start or its claims, and never takes a
 *   connection a caller is waiting for;
 * - it opens the connections the workers may use at once (`calls`), side by side, never the
 *   pool's last one (a caller can always open it) and never more than take the server to half its
 *   max_connections, and hands them to the pool as soon as they are open (a caller may use one
 *   cold, it only skips the connect); then it warms the cold ones, WARM_AT_ONCE at a time, each
 *   step after a quiet spell again; it keeps none: warmed connections are the pool's, closed by
 *   its own idleTimeoutMillis like any other, and not replaced. A pool of one is left alone.
 * - warming a connection runs, once, a task's whole life: insert, claim, complete, poll claim, in
 *   a transaction that is ROLLED BACK, in a queue of its own (WARM_QUEUE): nothing it writes is
 *   ever visible, it takes no lock a real call waits for, and the function compiles, plans and
 *   prepared statements it leaves behind are the ones the store's calls use.
 * Best effort: the first failure (server full, restart) ends the warm-up; the store's calls are
 * then as they would be without it.
 */
export class PgWarmUp {
  /** Live pooled clients this warm-up ran the hot statements on (dropped on the pool's 'remove'). */
  private readonly warmed = new Set<object>();
  /** Sum of `calls` of the workers asking (start); the loop runs while it is > 0. */
  private demand = 0;
  private loop: Promise<void> | null = null;
  private closed = false;
  /** The warm-ups the last step started (they run on after its gate is open again). */
  private warming: Promise<void> | null = null;
  /** Ends the current quiet wait early (a stop or close). */
  private interrupt: (() => void) | null = null;
  /** The pool whose 'remove' events keep `warmed` to live clients (set by the first start). */
  private watched: PgPoolState | null = null;
  private readonly removed = (client: unknown) => void this.warmed.delete(client as object);

  constructor(
    private readonly dataSource: DataSource,
    /** The store's context: its tables and the settings its statement texts depend on. */
    private readonly ctx: StoreContext,
  ) {}

  /** Warms connections for a worker making up to `calls` calls at once; returns the function that withdraws it. */
  start(calls: number): () => void {
    if (this.closed || calls <= 0) return () => undefined;
    if (!this.watched) {
      try {
        this.watched = this.pool();
      } catch {
        return () => undefined; // not initialized: the store's calls will say so
      }
      this.watched.on('remove', this.removed);
    }
    this.demand += calls;
    this.loop ??= this.run().finally(() => (this.loop = null));
    let withdrawn = false;
    return () => {
      if (withdrawn) return;
      withdrawn = true;
      this.demand -= calls;
      if (this.demand <= 0) this.interrupt?.();
    };
  }

  /** Resolves when no warm-up step runs or waits (a step in progress finishes first). */
  async settled(): Promise<void> {
    while (this.loop) await this.loop;
  }

  /** Ends the warm-up for good; resolves when its last step has handed its connection back. */
  async close(): Promise<void> {
    this.closed = true;
    this.interrupt?.();
    await this.settled();
    this.watched?.removeListener('remove', this.removed);
  }

  /** Warm connections to aim for: what the workers can use at once, never the pool's last one. */
  private target(pool: PgPoolState): number {
    return Math.max(0, Math.min(this.demand, (pool.options.max ?? 10) - 1));
  }

  private async run(): Promise<void> {
    const pool = this.watched;
    if (!pool) return;
    let lastUse = performance.now();
    let onUse: (() => void) | null = null;
    const used = () => {
      lastUse = performance.now();
      onUse?.();
    };
    pool.on('acquire', used);
    pool.on('release', used);
    const going = () => !this.closed && this.demand > 0;
    try {
      while (going() && this.warmed.size < this.target(pool)) {
        // wait until the pool has been unused for WARM_QUIET_MS: a release while connections are
        // out, else a timer for the rest of the quiet spell
        for (;;) {
          if (!going()) return;
          const since = performance.now() - lastUse;
          if (pool.waitingCount === 0 && pool.idleCount === pool.totalCount && since >= WARM_QUIET_MS) break;
          const busy = pool.idleCount !== pool.totalCount || pool.waitingCount > 0;
          await new Promise<void>((resolve) => {
            let timer: NodeJS.Timeout | null = null;
            const done = () => {
              if (timer) clearTimeout(timer);
              onUse = null;
              this.interrupt = null;
              resolve();
            };
            if (busy) onUse = done;
            else (timer = setTimeout(done, WARM_QUIET_MS - since)).unref?.();
            this.interrupt = done;
          });
        }
        let more = false;
        try {
          more = await this.step(pool);
        } finally {
          const w = this.warming;
          this.warming = null;
          await w;
        }
        if (!more) return;
      }
    } catch {
      // best effort (see the class): the store's own calls report what is wrong with the server
    } finally {
      pool.removeListener('acquire', used);
      pool.removeListener('release', used);
    }
  }

  /**
   * Opens the new connections the workers may need (up to target(), so never the pool's last one:
   * a caller arriving meanwhile can always have a connection), as many as the gate allows, side by
   * side, and starts warming up to WARM_AT_ONCE cold ones (checkOut). Returns false when it found
   * nothing to open or warm.
   */
  private async step(pool: PgPoolState): Promise<boolean> {
    const want = Math.max(0, Math.min(this.target(pool), (pool.options.max ?? 10) - 1) - pool.totalCount);
    if (want === 0) return (await this.checkOut(pool, 0)) > 0;
    // opening: under the server-wide gate, so that warm-ups in other pools and processes count
    // the connections this one opens before they decide on theirs
    const gate = await borrow(pool);
    let broken: Error | undefined;
    try {
      try {
        await gate.client.query({ text: GATE_SQL, values: [GATE_KEY] });
      } catch (e) {
        if ((e as { code?: string }).code === '55P03') return false; // lock_timeout: other warm-ups take long, leave it
        throw e;
      }
      try {
        const [r] = (await gate.client.query({ text: ROOM_SQL })).rows;
        const open = Math.min(want, Math.max(0, Number(r?.room ?? 0)));
        return (await this.checkOut(pool, open)) > 0 || open > 0;
      } finally {
        await gate.client.query({ text: 'SELECT pg_advisory_unlock($1)', values: [GATE_KEY] });
      }
    } catch (e) {
      broken = e as Error;
      throw e;
    } finally {
      gate.give(broken);
    }
  }

  /**
   * Checks out every idle connection plus `open` new ones, in one synchronous burst (pg-pool hands
   * its idle ones to waiting connects first come, first served, and opens a new one for each
   * connect left over); starts warming up to WARM_AT_ONCE cold ones and hands the others back as
   * soon as they arrive, so a connection opened here is the pool's to use at once. Resolves when
   * the new ones are open; returns how many it warms (`warming`: their end).
   */
  private async checkOut(pool: PgPoolState, open: number): Promise<number> {
    // settled at once (a failure is kept, not left unhandled while the new connections open)
    const runs: Array<Promise<PromiseSettledResult<void>>> = [];
    const taken = await Promise.allSettled(
      Array.from({ length: pool.idleCount + open }, () =>
        borrow(pool).then((b) => {
          if (!this.warmed.has(b.client) && runs.length < WARM_AT_ONCE) runs.push(settle(this.warmOne(b)));
          else b.give();
        }),
      ),
    );
    this.warming = Promise.all(runs).then((done) => {
      const failed = [...taken, ...done].find((t): t is PromiseRejectedResult => t.status === 'rejected');
      if (failed) throw failed.reason;
    });
    return runs.length;
  }

  private async warmOne(borrowed: Borrowed): Promise<void> {
    const client = borrowed.client;
    let broken: Error | undefined;
    try {
      await client.query({ text: 'BEGIN' });
      try {
        const c = this.context(client);
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

  /** The store's context on `client`, in a warm-up queue of its own (its own lock keys: two warm-ups never wait for each other). */
  private context(client: PooledClient): StoreContext {
    const s = this.ctx;
    const queue = `${WARM_QUEUE}:${randomUUID()}`;
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

function settle<T>(p: Promise<T>): Promise<PromiseSettledResult<T>> {
  return p.then(
    (value) => ({ status: 'fulfilled', value }),
    (reason: unknown) => ({ status: 'rejected', reason }),
  );
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
