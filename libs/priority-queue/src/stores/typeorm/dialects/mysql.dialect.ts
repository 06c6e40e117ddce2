import { driverError, type Dialect } from './dialect';

/** MySQL 8 and MariaDB 10.6+ through mysql2 (TypeORM types "mysql" and "mariadb"). */
export const mysqlDialect: Dialect = {
  kind: 'mysql',
  // NOW(3): one value per statement (the statement start).
  nowMs: `CAST(ROUND(UNIX_TIMESTAMP(NOW(3)) * 1000) AS SIGNED)`,
  returning: false,
  policies: { fairness: true, boost: true },
  rowLocks: true,
  placeholders: (sql) => sql,
  castBigint: (expr) => `CAST(${expr} AS SIGNED)`,
  concat: (...parts) => `CONCAT(${parts.join(', ')})`,
  big: (v) => v.toString(),
  onConflictUpdate: (_conflict, update) => `ON DUPLICATE KEY UPDATE ${update.map((c) => `${c} = VALUES(${c})`).join(', ')}`,
  isUniqueViolation: (e) => driverError(e).errno === 1062 || driverError(e).code === 'ER_DUP_ENTRY',
  isRetryable: (e) => [1213, 1205].includes(Number(driverError(e).errno)),
  nothingWritten(e) {
    const { errno, sqlState, fatal } = driverError(e);
    // a server error has an errno and a SQLSTATE; client errors (errno 2000-2999, a lost connection) are fatal or have none
    if (fatal === true || typeof errno !== 'number' || (errno >= 2000 && errno < 3000) || typeof sqlState !== 'string') return false;
    return !sqlState.startsWith('08') && !MAYBE_WRITTEN.has(errno);
  },
};

/** Server errors after which the statement may have committed: server shutdown, query interrupted (KILL), connection killed. */
const MAYBE_WRITTEN = new Set([1053, 1317, 1927]);
