import type { Clock } from '../../core/task-store.port';
import type { Db, Exec, Row } from './db';
import type { Dialect } from './dialects/dialect';
import type { PgDirect } from './pg-direct';
import { PgLeaseCache } from './pg-lease-cache';
import type { TableNames } from './names';
import { Sql } from './sql/sql';

/** What every query file needs: the connection, the dialect, table names, queue and ordering mode. */
export class StoreContext {
  /** PostgreSQL: tasks this store claimed, for its completes (pg-lease-cache.ts). */
  readonly leased = new PgLeaseCache();
  /** Transitions each task created by this store keeps (`history_limit`); 0 = none. */
  historyLimit = 0;

  constructor(
    readonly db: Db,
    readonly d: Dialect,
    readonly t: TableNames,
    readonly queue: string,
    readonly aging: number,
    readonly clock: Clock | null,
    /** PostgreSQL NOTIFY channel of this queue. */
    readonly channel: string,
    /** PostgreSQL only: named prepared statements on the pool, for the hot paths. */
    readonly pg: PgDirect | null = null,
  ) {}

  /** The store clock inside a statement: the injected clock as a parameter, else the server's. */
  nowSql(): Sql {
    if (!this.clock) return new Sql(this.d.nowMs, []);
    return new Sql(this.d.kind === 'sqlite' ? '?' : this.d.castBigint('?'), [this.clock.now()]);
  }

  /** The store clock read once (one round trip unless a clock was injected). */
  async now(x: Exec): Promise<number> {
    if (this.clock) return this.clock.now();
    if (x.lockNow !== undefined) return x.lockNow;
    const r = await x.rows<{ now: unknown }>(`SELECT ${this.d.nowMs} AS now`);
    return Number(r[0].now);
  }

  big(v: bigint): unknown {
    return this.d.big(v);
  }
}

export function q<T = Row>(x: Exec, s: Sql): Promise<T[]> {
  return x.rows<T>(s.text, s.params);
}

export function run(x: Exec, s: Sql): Promise<number> {
  return x.run(s.text, s.params);
}
