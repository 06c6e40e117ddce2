import type { DialectKind } from '../dialects/dialect';
import type { TableNames } from '../names';

/**
 * Version 7 of the schema (MySQL / MariaDB only; PostgreSQL and SQLite: only recorded).
 *
 * Keys compared exactly: v1's `utf8mb4_bin` is a PAD SPACE collation, so 'acme' and 'acme '
 * were equal in every comparison, join, GROUP BY and unique index: one tenant's quota, slots
 * and stats were the other's, and a second idempotency key differing only in trailing spaces
 * hit the unique index (a raw "Duplicate entry"). The columns that hold a caller's key move to
 * the server's NO PAD binary collation: `utf8mb4_nopad_bin` (MariaDB 10.2+) or
 * `utf8mb4_0900_bin` (MySQL 8.0+), picked by the statement itself (a prepared ALTER, as the
 * statements of a step are fixed text); a server with neither fails the step with a message
 * that says so. Byte for byte equal keys stay equal, so no unique index can be violated by the
 * change. Each ALTER rebuilds its table (an online rebuild on InnoDB; docs/TYPEORM.md).
 */
export const NO_PAD_COLLATIONS = ['utf8mb4_nopad_bin', 'utf8mb4_0900_bin'] as const;

/** The caller's keys per table, with their v1 definitions (only the collation changes). */
const KEY_COLUMNS = (t: TableNames): Array<[table: string, columns: string[]]> => [
  [
    t.tasks,
    [
      'idempotency_key VARCHAR(255) NULL',
      'provider_key VARCHAR(255) NOT NULL',
      'account_id VARCHAR(255) NULL',
      'tenant_id VARCHAR(255) NULL',
      'concurrency_key VARCHAR(255) NULL',
    ],
  ],
  [
    t.lanes,
    [
      'provider_key VARCHAR(255) NOT NULL',
      'account_id VARCHAR(255) NULL',
      'tenant_id VARCHAR(255) NULL',
      'concurrency_key VARCHAR(255) NULL',
      'parked_on VARCHAR(520) NULL',
    ],
  ],
  [t.resources, ['rkey VARCHAR(520) NOT NULL']],
];

/** `ALTER TABLE ... MODIFY` every key column of each table to `collation` (an SQL expression). */
function alters(t: TableNames, collation: string): string[] {
  const modify = (col: string) => {
    const [name, ...rest] = col.split(' ');
    const type = rest[0];
    const nullability = rest.slice(1).join(' ');
    return `'MODIFY ${name} ${type} CHARACTER SET utf8mb4 COLLATE ', ${collation}, ' ${nullability}'`;
  };
  return KEY_COLUMNS(t).flatMap(([table, cols]) => [
    `SET @pq_ddl = CONCAT('ALTER TABLE ${table} ', ${cols.map(modify).join(", ', ', ")})`,
    'PREPARE pq_ddl FROM @pq_ddl',
    'EXECUTE pq_ddl',
    'DEALLOCATE PREPARE pq_ddl',
  ]);
}

export function ddlV7(kind: DialectKind, t: TableNames): string[] {
  if (kind !== 'mysql') return [];
  const list = NO_PAD_COLLATIONS.map((c) => `'${c}'`).join(', ');
  return [
    // the first of NO_PAD_COLLATIONS the server has; with none, the ALTER fails naming what is
    // missing ("Unknown collation: 'no NO PAD binary collation ...'") instead of a NULL PREPARE
    `SET @pq_collation = (SELECT COLLATION_NAME FROM information_schema.COLLATIONS WHERE COLLATION_NAME IN (${list})
      ORDER BY FIELD(COLLATION_NAME, ${list}) LIMIT 1)`,
    `SET @pq_collation = COALESCE(@pq_collation, 'no NO PAD binary collation (${NO_PAD_COLLATIONS.join(' or ')}) on this server: MariaDB 10.6+ or MySQL 8 is needed')`,
    ...alters(t, '@pq_collation'),
  ];
}

/** Back to version 6: the key columns in utf8mb4_bin again. */
export function undoV7(kind: DialectKind, t: TableNames): string[] {
  if (kind !== 'mysql') return [];
  return alters(t, `'utf8mb4_bin'`);
}
