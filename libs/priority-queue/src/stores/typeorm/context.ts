import type { Clock } from '../../core/task-store.port';
import type { Db, Exec, Row } from './db';
import type { Dialect } from './dialects/dialect';
import type { PgDirect } from './pg-direct';
import { LeaseCache, type Leased } from '../shared/lease-cache';
import type { TableNames } from './names';
import { Sql } from './sql/sql';

/**
 * PostgreSQL (schema v3): a task this store claimed, as the claim's UPDATE wrote it, kept until its
 * complete, so that a batch of completes sends each row's ctid instead of making the server find
 * it by the id index, and gets back only the id and the time written instead of the whole row
 * (sql/complete-batch.ts; the server re-checks the fence, the id and the ctid: a row that moved
 * since is sent again the long way).
 */
export interface LeasedRow extends Leased {
  row: Row;
  /** The row version's ctid ("(page,item)"): the complete finds it by a TID scan. */
  ctid: string;
}

/** What every query file needs: the connection, the dialect, table names, queue and ordering mode. */
export class StoreContext {
  /** PostgreSQL: tasks this store claimed, for their completes (LeasedRow). */
  readonly leased = new LeaseCache<LeasedRow>();
  /** Transitions each task created by this store keeps (`history_limit`); 0 = none. */
  historyLimit = 0;
  /**
   * DESIGN §7 fair share on this queue (fairness: 'tenant'): k2 holds each task's fair tag
   * (order-columns.ts) and creates, claims and re-tags keep V[p] / F[t,p] (sql/fair-tags.ts).
   */
  fair = false;

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
