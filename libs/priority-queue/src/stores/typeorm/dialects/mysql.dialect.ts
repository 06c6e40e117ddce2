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
};
