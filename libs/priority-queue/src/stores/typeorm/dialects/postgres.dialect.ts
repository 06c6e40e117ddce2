import { driverError, type Dialect } from './dialect';

export const postgresDialect: Dialect = {
  kind: 'postgres',
  // statement_timestamp(): one value per statement, fresh for every statement of a transaction.
  nowMs: `(floor(extract(epoch from statement_timestamp()) * 1000))::bigint`,
  returning: true,
  policies: { fairness: true, boost: true }, // DESIGN §7 in schema/postgres: 1-fair-tags.sql, 1-claim.sql steps 0 and 7
  rowLocks: true,
  placeholders(sql) {
    let n = 0;
    return sql.replace(/\?/g, () => `$${++n}`);
  },
  castBigint: (expr) => `CAST(${expr} AS BIGINT)`,
  concat: (...parts) => parts.join(' || '),
  big: (v) => v.toString(),
  onConflictUpdate: (conflict, update) =>
    `ON CONFLICT (${conflict.join(', ')}) DO UPDATE SET ${update.map((c) => `${c} = excluded.${c}`).join(', ')}`,
  isUniqueViolation: (e) => driverError(e).code === '23505',
  isRetryable: (e) => ['40P01', '40001', '55P03'].includes(String(driverError(e).code)),
  nothingWritten(e) {
    const { code, severity } = driverError(e);
    // an error response carries a SQLSTATE; a client-side failure (a dropped connection) none
    if (typeof code !== 'string' || !/^[0-9A-Z]{5}$/.test(code)) return false;
    return !MAYBE_WRITTEN.has(code.slice(0, 2)) && severity !== 'FATAL' && severity !== 'PANIC';
  },
};

/**
 * SQLSTATE classes after which the statement may have committed: connection exception, operator
 * intervention (a terminated backend, a shutdown), system error, internal error.
 */
const MAYBE_WRITTEN = new Set(['08', '57', '58', 'XX']);
