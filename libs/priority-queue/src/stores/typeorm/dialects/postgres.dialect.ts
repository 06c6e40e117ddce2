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
};
