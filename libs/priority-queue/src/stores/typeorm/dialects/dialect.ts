/**
 * What differs between PostgreSQL, MySQL / MariaDB and SQLite, in one place. Every SQL text of
 * the store is written with `?` placeholders; `placeholders()` turns them into `$n` for PostgreSQL.
 */
export type DialectKind = 'postgres' | 'mysql' | 'sqlite';

/** The DESIGN §7 policies the store implements on a dialect (TaskStore.policies). */
export interface DialectPolicies {
  readonly fairness: boolean;
  readonly boost: boolean;
}

export interface Dialect {
  readonly kind: DialectKind;
  /** Expression of the server clock in epoch milliseconds (an integer). */
  readonly nowMs: string;
  /** `UPDATE ... RETURNING` and `DELETE ... RETURNING`. */
  readonly returning: boolean;
  /**
   * The DESIGN §7 policies the store implements on this dialect (one that is off is refused):
   * the generic SQL path (MySQL / MariaDB, SQLite) implements them in TypeScript; PostgreSQL's
   * create and claim in its own statements and PL/pgSQL functions (schema/postgres).
   */
  readonly policies: DialectPolicies;
  /** Row locks (`FOR UPDATE`, `SKIP LOCKED`); SQLite has a single writer instead. */
  readonly rowLocks: boolean;
  /** SQL text with `?` placeholders rewritten for the driver. */
  placeholders(sql: string): string;
  /** CAST of an expression to a 64-bit integer. */
  castBigint(expr: string): string;
  /** `a || b` in the dialect. */
  concat(...parts: string[]): string;
  /** A bigint parameter (pg / mysql take decimal strings; better-sqlite3 takes a BigInt). */
  big(v: bigint): unknown;
  /** What follows `INSERT ... VALUES (...)` to update on a key conflict (`ON CONFLICT ... DO UPDATE` / `ON DUPLICATE KEY UPDATE`). */
  onConflictUpdate(conflict: readonly string[], update: readonly string[]): string;
  isUniqueViolation(e: unknown): boolean;
  /** Deadlock, serialization failure, lock timeout, busy database: the transaction may be retried. */
  isRetryable(e: unknown): boolean;
  /**
   * The statement failed and nothing of it was written: the server answered with an error of the
   * statement (a constraint, a type, a syntax error) and rolled it back. False when it may have
   * committed before the error: a lost connection, a terminated session, a server shutting down
   * or an internal error (an unknown outcome: sending it again could write it twice).
   */
  nothingWritten(e: unknown): boolean;
}

export interface DriverError {
  code?: unknown;
  errno?: unknown;
  message?: string;
  /** node-pg: ERROR, FATAL, PANIC. */
  severity?: unknown;
  /** mysql2: SQLSTATE of a server error. */
  sqlState?: unknown;
  /** mysql2: the connection is gone. */
  fatal?: unknown;
}

export function driverError(e: unknown): DriverError {
  const d = (e as { driverError?: unknown })?.driverError ?? e;
  return (d !== null && typeof d === 'object' ? d : {}) as DriverError;
}
