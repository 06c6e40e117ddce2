import type { DataSource, QueryRunner } from 'typeorm';
import type { Dialect } from './dialects/dialect';
import { ER_PARSE_ERROR, errnoOf, runBatch, type BatchPart } from './mariadb-batch';

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
  /** The rows of TxOptions.begin, read as the transaction began. */
  begun?: Row[];
  /**
   * MariaDB: TxOptions.endIf found its condition true and committed the transaction in the
   * round trip that began it: send nothing more (the Db sends no COMMIT).
   */
  ended?: boolean;
  /**
   * MariaDB (compound statements, mariadb-batch.ts): queues a write whose answer nobody reads;
   * it reaches the server with the transaction's next statement or its COMMIT, in the same
   * round trip. Undefined elsewhere (write at once).
   */
  later?(sql: string, params?: readonly unknown[]): void;
  /**
   * MariaDB (batches): the queued writes and these reads in one round trip; the reads' result
   * sets, in order. Undefined elsewhere.
   */
  reads?(parts: ReadonlyArray<{ text: string; params: readonly unknown[] }>): Promise<Row[][]>;
}

/**
 * `x` whose run() is queued by later() where the server takes batches (MariaDB; the row count
 * it answers is then 0): for a transaction's last writes, whose counts nobody reads, so that
 * they go with its COMMIT (or its next read) in one round trip. Elsewhere `x` itself.
 */
export function writesLater(x: Exec): Exec {
  const later = x.later;
  if (!later) return x;
  return {
    rows: (sql, params) => x.rows(sql, params),
    insertId: (sql, params) => x.insertId(sql, params),
    run: (sql, params) => (later(sql, params), Promise.resolve(0)),
    later,
    reads: x.reads,
    lockNow: x.lockNow,
    begun: x.begun,
  };
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
   * MySQL: READ COMMITTED for this transaction (default true; one more round trip, none on
   * MariaDB). Single-row writes by a unique key (fenced writes) lock the same row under the
   * default level.
   */
  readCommitted?: boolean;
  /**
   * A read to run first in the transaction (its rows in Exec.begun): on MariaDB in the same
   * round trip as START TRANSACTION (after the queue lock, when there is one).
   */
  begin?: { text: string; params: readonly unknown[] };
  /**
   * MariaDB batches only: a condition checked right after `begin`, in the same round trip; when
   * it holds, the transaction commits there and then (Exec.ended): for a claim that has nothing
   * to do, one round trip in all. Ignored where statements go one by one.
   */
  endIf?: { text: string; params: readonly unknown[] };
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
  /**
   * MariaDB (TypeORM type `mariadb`): statements go in compound-statement batches
   * (mariadb-batch.ts): a transaction's start with its queue lock, its last writes with its
   * COMMIT. Turned off for good if the server cannot parse one (a MySQL server behind type `mariadb`).
   */
  private batches: boolean;

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
    this.batches = dialect.kind === 'mysql' && (dataSource.options as { type?: unknown }).type === 'mariadb';
  }

  /** Whether this Db sends MariaDB compound-statement batches (see `batches`). */
  get batching(): boolean {
    return this.batches;
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
      const readCommitted = kind === 'mysql' && opts.readCommitted !== false;
      const rowLock = kind === 'mysql' && opts.queueLock ? this.rowLock : null;
      let lockRows: Row[] | undefined;
      const begin = kind === 'mysql' ? opts.begin : undefined;
      if (this.batches && (readCommitted || rowLock || begin)) {
        // MariaDB: isolation level, START TRANSACTION and the queue lock with the clock: ONE round trip
        const parts: BatchPart[] = [];
        if (readCommitted) parts.push({ sql: 'SET TRANSACTION ISOLATION LEVEL READ COMMITTED' });
        parts.push({ sql: 'START TRANSACTION' });
        if (rowLock) parts.push({ sql: rowLock.sql, params: rowLock.params });
        if (begin) parts.push({ sql: begin.text, params: begin.params });
        const endIf = begin ? opts.endIf : undefined;
        if (endIf) {
          parts.push({ sql: `IF ${endIf.text} THEN COMMIT; END IF`, params: endIf.params });
          parts.push({ sql: 'SELECT @@in_transaction AS pq_open' });
        }
        try {
          open = true; // from START TRANSACTION on, a failure rolls back
          const sets = await runBatch(qr, parts);
          lockRows = rowLock ? sets[0] : undefined;
          if (begin) x.begun = sets[rowLock ? 1 : 0] ?? [];
          if (endIf) x.ended = Number(sets[sets.length - 1]?.[0]?.pq_open) === 0;
        } catch (e) {
          if (errnoOf(e) !== ER_PARSE_ERROR) throw e;
          this.batches = false; // not MariaDB after all: nothing ran; statement by statement from now on
          x.later = undefined;
          x.reads = undefined;
          open = false;
        }
      }
      if (!this.batches || !(readCommitted || rowLock || begin)) {
        if (readCommitted) await qr.query('SET TRANSACTION ISOLATION LEVEL READ COMMITTED');
        await qr.query(kind === 'sqlite' ? 'BEGIN IMMEDIATE' : 'BEGIN');
        open = true;
        if (rowLock) lockRows = await x.rows(rowLock.sql, rowLock.params);
        if (begin) x.begun = await x.rows(begin.text, begin.params);
      }
      if (rowLock) {
        const r = lockRows?.[0];
        if (!r) throw new Error('the queue row is missing: call init() first');
        x.lockNow = Number(r.now);
      }
      if (kind === 'postgres' && opts.queueLock) {
        await x.rows('SELECT pg_advisory_xact_lock(?, ?)', [this.lockKeys[0], this.lockKeys[1]]);
      }
      const out = await fn(x, qr);
      if (!x.ended) await x.commit();
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

  /**
   * MariaDB: ONE round trip for a whole short transaction whose statements need no answer
   * before its COMMIT (a small create): START TRANSACTION, `parts`, COMMIT as one compound
   * statement (mariadb-batch.ts); rolled back if one fails. Returns the parts' result sets, or
   * null when this Db does not batch (then run it as a tx()). Retried on deadlocks like tx().
   */
  async oneShot(parts: readonly BatchPart[]): Promise<Row[][] | null> {
    if (!this.batches) return null;
    return retryOnConflict(this.dialect, async () => {
      const qr = this.dataSource.createQueryRunner();
      try {
        return await runBatch(qr, [{ sql: 'START TRANSACTION' }, ...parts, { sql: 'COMMIT' }]);
      } catch (e) {
        await qr.query('ROLLBACK').catch(() => undefined);
        throw e;
      } finally {
        await qr.release();
      }
    });
  }

  private exec(qr: QueryRunner): Exec & { commit(): Promise<void> } {
    const d = this.dialect;
    /** MariaDB: writes queued by later(), sent with the next statement or the COMMIT. */
    const pending: BatchPart[] = [];
    const flush = async () => {
      if (pending.length > 0) await runBatch(qr, pending.splice(0));
    };
    const x: Exec & { commit(): Promise<void> } = {
      async rows<T>(sql: string, params: readonly unknown[] = []): Promise<T[]> {
        if (pending.length > 0) {
          // the queued writes and this read in one round trip: the read's rows are the last result set
          const sets = await runBatch(qr, [...pending.splice(0), { sql: d.placeholders(sql), params }]);
          return (sets[sets.length - 1] ?? []) as T[];
        }
        const r = (await qr.query(d.placeholders(sql), params as unknown[], true)) as QueryResultLike;
        return (r.records ?? []) as T[];
      },
      async run(sql: string, params: readonly unknown[] = []): Promise<number> {
        await flush();
        const r = (await qr.query(d.placeholders(sql), params as unknown[], true)) as QueryResultLike;
        return r.affected ?? (Array.isArray(r.records) ? r.records.length : 0);
      },
      async insertId(sql: string, params: readonly unknown[] = []): Promise<number | null> {
        await flush();
        const r = (await qr.query(d.placeholders(sql), params as unknown[], true)) as QueryResultLike;
        const id = Number(r.raw?.insertId);
        return Number.isSafeInteger(id) && id > 0 ? id : null;
      },
      async commit(): Promise<void> {
        if (pending.length > 0) await runBatch(qr, [...pending.splice(0), { sql: 'COMMIT' }]);
        else await qr.query('COMMIT');
      },
    };
    if (this.batches) {
      x.later = (sql, params = []) => void pending.push({ sql: d.placeholders(sql), params });
      x.reads = async (parts) => {
        const n = parts.length;
        const sets = await runBatch(qr, [...pending.splice(0), ...parts.map((p) => ({ sql: d.placeholders(p.text), params: p.params }))]);
        return sets.slice(sets.length - n);
      };
    }
    return x;
  }
}
