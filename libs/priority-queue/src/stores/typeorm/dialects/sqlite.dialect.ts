import { driverError, type Dialect } from './dialect';

/** SQLite 3.35+ (better-sqlite3 12 bundles a recent one): one writer, `BEGIN IMMEDIATE`. */
export const sqliteDialect: Dialect = {
  kind: 'sqlite',
  nowMs: `CAST(ROUND((julianday('now') - 2440587.5) * 86400000.0) AS INTEGER)`,
  returning: true,
  policies: { fairness: true, boost: true },
  rowLocks: false,
  placeholders: (sql) => sql,
  castBigint: (expr) => `CAST(${expr} AS INTEGER)`,
  concat: (...parts) => parts.join(' || '),
  big: (v) => v,
  onConflictUpdate: (conflict, update) =>
    `ON CONFLICT (${conflict.join(', ')}) DO UPDATE SET ${update.map((c) => `${c} = excluded.${c}`).join(', ')}`,
  isUniqueViolation: (e) => String(driverError(e).code ?? '').startsWith('SQLITE_CONSTRAINT'),
  isRetryable: (e) => ['SQLITE_BUSY', 'SQLITE_LOCKED'].includes(String(driverError(e).code ?? '')),
  nothingWritten(e) {
    // in process: an error code of the statement means it rolled back; a failing disk or file may have written part of it
    const code = String(driverError(e).code ?? '');
    return code.startsWith('SQLITE_') && !/^SQLITE_(IOERR|CORRUPT|NOTADB|FULL|CANTOPEN)/.test(code);
  },
};
