import type { DataSource, QueryRunner } from 'typeorm';
import type { Dialect } from './dialects/dialect';

export type Row = Record<string, unknown>;

/**
 * Runs `fn` again (up to 5 attempts, short random back-off) when the database reports a deadlock,
 * a serialization failure or a busy lock (dialect.isRetryable); `fn` must be safe to repeat.
 */
export async function retryOnConflict<T>(dialect: Dialect, fn: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await fn();
    } catch (e) {
      if (attempt >= 5 || !dialect.isRetryable(e)) throw e;
      await new Promise((r) => setTimeout(r, Math.floor(Math.random() * 10 * attempt)));
    }
  }
}

/** Runs SQL written with `?` placeholders; `run` returns the affected row count. */
export interface Exec {
  rows<T = Row>(sql: string, params?: readonly unknown[]): Promise<T[]>;
  run(sql: string, params?: readonly unknown[]): Promise<number>;
  /**
   * MySQL: runs an INSERT and returns the AUTO_INCREMENT value the server sent in its OK packet
   * (LAST_INSERT_ID: the first row's; exact for a one-row INSERT), null when there is none.
   */
  insertId(sql: string, params?: readonly unknown[]): Promise<number | null>;
  /** The server clock read by the statement that took the queue lock (MySQL row lock), if any. */
  lockNow?: number;
}

/**
 * MySQL queue lock as a row lock on the queue's row, taken with the clock in one statement
 * (`SELECT <now> FROM queues WHERE queue = ? FOR UPDATE`): one round trip instead of GET_LOCK,
 * RELEASE_LOCK and a clock read. Needs the queue row (created by init()).
 */
export interface RowLock {
  sql: string;
  params: readonly unknown[];
}

export interface TxOptions {
  /**
   * Serialise with every other queue-locked transaction of the same queue: PostgreSQL
   * `pg_advisory_xact_lock`, MySQL `GET_LOCK` (released after COMMIT), SQLite: every write
   * transaction is `BEGIN IMMEDIATE` and holds the single writer lock anyway.
   */
  queueLock?: boolean;
  /**
   * MySQL: READ COMMITTED for this transaction (default true; one more round trip). Single-row
   * writes by a unique key (fenced writes) lock the same row under the default level.
   */
  readCommitted?: boolean;
}

interface QueryResultLike {
  records?: unknown[];
  affected?: number;
  raw?: { insertId?: unknown };
}

/** A tiny FIFO mutex: SQLite through TypeORM has ONE connection, so transactions take turns. */
class Mutex {
  private tail: Promise<void> = Promise.resolve();
  async run<T>(fn: () => Promise<T>): Promise<T> {
    const prev = this.tail;
    let release!: () => void;
    this.tail = new Promise<void>((r) => (release = r));
    await prev;
    try {
      return await fn();
    } finally {
      release();
    }
  }
}

/**
 * Serialises the statements and transactions of every store on one SQLite DataSource (one
 * connection: a second BEGIN while a transaction is open fails with "cannot start a transaction
 * within a transaction"), whatever queue they serve.
 */
const SQLITE_MUTEXES = new WeakMap<DataSource, Mutex>();

/**
 * The store's access to the database: single statements, and short transactions (READ
 * COMMITTED on PostgreSQL and MySQL) retried on deadlock / serialization failures. Never
 * closes the DataSource.
 */
export class Db {
  /** SQLite: ONE mutex per DataSource, shared by every store (queue) on it: it has one connection. */
  private readonly mutex: Mutex;

  constructor(
    readonly dataSource: DataSource,
    readonly dialect: Dialect,
    /** Name of the queue lock (MySQL GET_LOCK, at most 64 characters). */
    private readonly lockName: string,
    /** The two int4 keys of pg_advisory_xact_lock. */
    readonly lockKeys: readonly [number, number],
    private readonly rowLock: RowLock | null = null,
  ) {
    let m = SQLITE_MUTEXES.get(dataSource);
    if (!m) SQLITE_MUTEXES.set(dataSource, (m = new Mutex()));
    this.mutex = m;
  }

  /** One statement outside a transaction (autocommit). */
  rows<T = Row>(sql: string, params: readonly unknown[] = []): Promise<T[]> {
    return this.single((x) => x.rows<T>(sql, params));
  }

  run(sql: string, params: readonly unknown[] = []): Promise<number> {
    return this.single((x) => x.run(sql, params));
  }

  insertId(sql: string, params: readonly unknown[] = []): Promise<number | null> {
    return this.single((x) => x.insertId(sql, params));
  }

  private single<T>(fn: (x: Exec) => Promise<T>): Promise<T> {
    return this.autocommit((qr) => fn(this.exec(qr)));
  }

  /** Statements outside a transaction through one query runner (SQLite: under the DataSource's mutex). */
  async autocommit<T>(fn: (qr: QueryRunner) => Promise<T>): Promise<T> {
    if (this.dialect.kind === 'sqlite') return this.mutex.run(() => fn(this.dataSource.createQueryRunner()));
    const qr = this.dataSource.createQueryRunner();
    try {
      return await fn(qr);
    } finally {
      await qr.release();
    }
  }

  /** A short transaction; `fn` may run more than once (retry on deadlock), so keep it free of side effects. */
  async tx<T>(fn: (x: Exec, qr: QueryRunner) => Promise<T>, opts: TxOptions = {}): Promise<T> {
    return retryOnConflict(this.dialect, () =>
      this.dialect.kind === 'sqlite' ? this.mutex.run(() => this.txOnce(fn, opts)) : this.txOnce(fn, opts),
    );
  }

  private async txOnce<T>(fn: (x: Exec, qr: QueryRunner) => Promise<T>, opts: TxOptions): Promise<T> {
    const qr = this.dataSource.createQueryRunner();
    const x = this.exec(qr);
    const kind = this.dialect.kind;
    let locked = false;
    let open = false;
    try {
      if (kind === 'mysql' && opts.queueLock && !this.rowLock) {
        const r = await x.rows<{ l: unknown }>('SELECT GET_LOCK(?, 60) AS l', [this.lockName]);
        if (Number(r[0]?.l) !== 1) throw new Error(`could not take the queue lock ${this.lockName}`);
        locked = true;
      }
      if (kind === 'mysql' && opts.readCommitted !== false) await qr.query('SET TRANSACTION ISOLATION LEVEL READ COMMITTED');
      await qr.query(kind === 'sqlite' ? 'BEGIN IMMEDIATE' : 'BEGIN');
      open = true;
      if (kind === 'mysql' && opts.queueLock && this.rowLock) {
        const [r] = await x.rows<{ now: unknown }>(this.rowLock.sql, this.rowLock.params);
        if (!r) throw new Error('the queue row is missing: call init() first');
        x.lockNow = Number(r.now);
      }
      if (kind === 'postgres' && opts.queueLock) {
        await x.rows('SELECT pg_advisory_xact_lock(?, ?)', [this.lockKeys[0], this.lockKeys[1]]);
      }
      const out = await fn(x, qr);
      await qr.query('COMMIT');
      open = false;
      return out;
    } catch (e) {
      if (open) await qr.query('ROLLBACK').catch(() => undefined);
      throw e;
    } finally {
      if (locked) await x.rows('SELECT RELEASE_LOCK(?)', [this.lockName]).catch(() => undefined);
      if (kind !== 'sqlite') await qr.release();
    }
  }

  private exec(qr: QueryRunner): Exec {
    const d = this.dialect;
    return {
      async rows<T>(sql: string, params: readonly unknown[] = []): Promise<T[]> {
        const r = (await qr.query(d.placeholders(sql), params as unknown[], true)) as QueryResultLike;
        return (r.records ?? []) as T[];
      },
      async run(sql: string, params: readonly unknown[] = []): Promise<number> {
        const r = (await qr.query(d.placeholders(sql), params as unknown[], true)) as QueryResultLike;
        return r.affected ?? (Array.isArray(r.records) ? r.records.length : 0);
      },
      async insertId(sql: string, params: readonly unknown[] = []): Promise<number | null> {
        const r = (await qr.query(d.placeholders(sql), params as unknown[], true)) as QueryResultLike;
        const id = Number(r.raw?.insertId);
        return Number.isSafeInteger(id) && id > 0 ? id : null;
      },
    };
  }
}
