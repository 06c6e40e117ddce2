import type { MigrationInterface, QueryRunner } from 'typeorm';
import { dialectOf } from '../dialects';
import type { DialectKind } from '../dialects/dialect';
import { DEFAULT_TABLE_PREFIX, isValidTablePrefix, tableNames, type TableNames } from '../names';
import { Messages } from '../../../core/messages';
import { schemaFileStatements } from './sql-files';

/**
 * The store's schema: ONE migration per dialect, its SQL in `schema/<dialect>/1-*.sql` (tables,
 * indexes, PostgreSQL functions, the history trigger; docs/TYPEORM.md lists them and the rights
 * they need). Two ways to run it:
 * - `store.init()` (migrate.ts) applies what `<prefix>schema_version` does not record yet, under
 *   a lock, so several processes may start at once;
 * - `priorityQueueMigrations({ tablePrefix })` in a DataSource's `migrations`, run by the team's
 *   own `migration:run`; it records itself in `<prefix>schema_version` too, so a later `init()`
 *   finds nothing to do.
 * Never `synchronize`. Every statement is idempotent (IF NOT EXISTS, CREATE OR REPLACE, DROP ...
 * IF EXISTS first): MySQL commits each DDL statement on its own, so a migration cut in the
 * middle there is run again from its start.
 *
 * Adding a change to the schema
 * - Until the first release (0.1.0 is unreleased): edit the `1-*.sql` files of every dialect
 *   (and `1-down.sql`) in place; nobody has a database to upgrade.
 * - Once released, a released migration's files never change. A change is migration 2: files
 *   `schema/<dialect>/2-<what>.sql` for EVERY dialect (an empty list where a dialect needs
 *   nothing, so its version is still recorded), a `2-down.sql` that undoes only migration 2, and
 *   an entry `{ version: 2, ... }` below with the next timestamp. Columns: `ALTER TABLE ... ADD
 *   COLUMN` with a default that suits existing rows (MySQL: no IF NOT EXISTS; MariaDB has it).
 *   A PostgreSQL function it changes is re-created whole in a `2-*.sql` file (DROP FUNCTION
 *   first when its arguments or result change), so each function's newest body lives in the
 *   newest file that has it; give that file the header of the one it replaces (what the
 *   function mirrors in core, its locking). The store's queries may then use migration 2's
 *   objects: init() refuses to run a store on a schema older than LATEST_SCHEMA_VERSION when
 *   migrate is false.
 */
export interface SchemaMigration {
  version: number;
  /** Class name prefix; TypeORM's name is `<name><prefix letters><timestamp>`. */
  name: string;
  /** 13-digit timestamp, as TypeORM requires at the end of a migration's name. */
  timestamp: string;
  /** Files of `schema/<dialect>/`, run in this order. */
  up: Readonly<Record<DialectKind, readonly string[]>>;
  /** What the migration's `down` runs. */
  down: Readonly<Record<DialectKind, readonly string[]>>;
}

export const SCHEMA_MIGRATIONS: readonly SchemaMigration[] = [
  {
    version: 1,
    name: 'PriorityQueueSchema1',
    timestamp: '1732924800000',
    up: {
      postgres: ['1-tables.sql', '1-fair-tags.sql', '1-claim.sql', '1-complete-leased.sql', '1-complete-and-claim.sql', '1-claim-polls.sql', '1-task-history.sql'],
      mysql: ['1-tables.sql', '1-key-collation.sql', '1-task-history.sql'],
      sqlite: ['1-tables.sql', '1-task-history.sql'],
    },
    down: { postgres: ['1-down.sql'], mysql: ['1-down.sql'], sqlite: ['1-down.sql'] },
  },
];

/** The schema version this library's queries need. */
export const LATEST_SCHEMA_VERSION = SCHEMA_MIGRATIONS[SCHEMA_MIGRATIONS.length - 1].version;

/** The statements of one migration's up (or down) for a dialect and a table prefix. */
export function migrationStatements(m: SchemaMigration, kind: DialectKind, t: TableNames, direction: 'up' | 'down' = 'up'): string[] {
  return m[direction][kind].flatMap((file) => schemaFileStatements(kind, file, t));
}

/** Applies one migration through a query runner (inside the caller's transaction / lock); false when already recorded. */
export async function applyMigration(qr: QueryRunner, m: SchemaMigration, t: TableNames): Promise<boolean> {
  const dialect = dialectOf(qr.connection);
  for (const sql of schemaFileStatements(dialect.kind, 'schema-version.sql', t)) await qr.query(sql);
  const done = (await qr.query(dialect.placeholders(`SELECT version FROM ${t.schemaVersion} WHERE version = ?`), [m.version])) as unknown[];
  if (done.length > 0) return false;
  for (const sql of migrationStatements(m, dialect.kind, t)) await qr.query(sql);
  await qr.query(dialect.placeholders(`INSERT INTO ${t.schemaVersion} (version, name, applied_at) VALUES (?, ?, ?)`), [m.version, m.name, Date.now()]);
  return true;
}

/** Undoes one migration (its down files, then its row in `<prefix>schema_version` when that table is left). */
export async function revertMigration(qr: QueryRunner, m: SchemaMigration, t: TableNames): Promise<void> {
  const dialect = dialectOf(qr.connection);
  for (const sql of migrationStatements(m, dialect.kind, t, 'down')) await qr.query(sql);
  if (await qr.hasTable(t.schemaVersion)) {
    await qr.query(dialect.placeholders(`DELETE FROM ${t.schemaVersion} WHERE version = ?`), [m.version]);
  }
}

/**
 * Migration classes for a DataSource's `migrations` option, one per schema migration (today
 * one), for teams that run their own migrations. Construct the store with `migrate: false`
 * then. `down` of the first one removes every table, function and trigger of the prefix.
 */
export function priorityQueueMigrations(options: { tablePrefix?: string } = {}): Array<new () => MigrationInterface> {
  const prefix = options.tablePrefix ?? DEFAULT_TABLE_PREFIX;
  if (!isValidTablePrefix(prefix)) throw new Error(Messages.badTablePrefix(prefix));
  const t = tableNames(prefix);
  return SCHEMA_MIGRATIONS.map((m) => {
    const name = `${m.name}${prefix.replace(/[^A-Za-z0-9]/g, '')}${m.timestamp}`;
    const cls = class implements MigrationInterface {
      name = name;
      async up(qr: QueryRunner): Promise<void> {
        await applyMigration(qr, m, t);
      }
      async down(qr: QueryRunner): Promise<void> {
        await revertMigration(qr, m, t);
      }
    };
    Object.defineProperty(cls, 'name', { value: name });
    return cls;
  });
}
