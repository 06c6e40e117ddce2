import type { MigrationInterface, QueryRunner } from 'typeorm';
import { dialectOf } from '../dialects';
import type { DialectKind } from '../dialects/dialect';
import { DEFAULT_TABLE_PREFIX, isValidTablePrefix, tableNames, type TableNames } from '../names';
import { Messages } from '../../../core/messages';
import { ddlV1 } from './ddl-v1';
import { ddlV2, undoV2 } from './ddl-v2';
import { ddlV3, undoV3 } from './ddl-v3';
import { ddlV4, undoV4 } from './ddl-v4';
import { ddlV5, undoV5 } from './ddl-v5';
import { ddlV6, undoV6 } from './ddl-v6';
import { ddlV7, undoV7 } from './ddl-v7';

/**
 * The store's schema as real TypeORM migrations. Two ways to run them (docs/TYPEORM.md):
 * - `store.init()` runs the ones not yet recorded in `<prefix>schema_version`, under a lock, so
 *   several processes may start at once;
 * - or add `priorityQueueMigrations({ tablePrefix })` to your DataSource's `migrations` and run
 *   them with your own `migration:run`; they record themselves in `<prefix>schema_version` too, so
 *   a later `init()` finds nothing to do.
 * Every statement is idempotent (IF NOT EXISTS), never `synchronize`.
 */
export interface SchemaStep {
  version: number;
  /** Migration name: ends with a 13-digit timestamp as TypeORM requires. */
  name: string;
  statements(kind: DialectKind, t: TableNames): string[];
  /** What the migration's `down` runs. */
  undo(kind: DialectKind, t: TableNames): string[];
}

export const SCHEMA_STEPS: readonly SchemaStep[] = [
  {
    version: 1,
    name: 'PriorityQueueSchemaV1',
    statements: ddlV1,
    undo: (_kind, t) => [t.releases, t.resources, t.lanes, t.tasks, t.queues].map((table) => `DROP TABLE IF EXISTS ${table}`),
  },
  { version: 2, name: 'PriorityQueueSchemaV2', statements: ddlV2, undo: undoV2 },
  { version: 3, name: 'PriorityQueueSchemaV3', statements: ddlV3, undo: undoV3 },
  { version: 4, name: 'PriorityQueueSchemaV4', statements: ddlV4, undo: undoV4 },
  { version: 5, name: 'PriorityQueueSchemaV5', statements: ddlV5, undo: undoV5 },
  { version: 6, name: 'PriorityQueueSchemaV6', statements: ddlV6, undo: undoV6 },
  { version: 7, name: 'PriorityQueueSchemaV7', statements: ddlV7, undo: undoV7 },
];

const TIMESTAMPS: Record<number, string> = { 1: '1732924800000', 2: '1733011200000', 3: '1733097600000', 4: '1733184000000', 5: '1733270400000', 6: '1733356800000', 7: '1733443200000' };

export function schemaVersionDdl(kind: DialectKind, t: TableNames): string {
  const str = kind === 'sqlite' ? 'TEXT' : 'VARCHAR(255)';
  const big = kind === 'sqlite' ? 'INTEGER' : 'BIGINT';
  const tail = kind === 'mysql' ? ' ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin' : '';
  return `CREATE TABLE IF NOT EXISTS ${t.schemaVersion} (version INTEGER NOT NULL PRIMARY KEY, name ${str} NOT NULL, applied_at ${big} NOT NULL)${tail}`;
}

/** Applies one step through a query runner (inside the caller's transaction / lock). */
export async function applyStep(qr: QueryRunner, step: SchemaStep, t: TableNames): Promise<boolean> {
  const dialect = dialectOf(qr.connection);
  await qr.query(schemaVersionDdl(dialect.kind, t));
  const done = (await qr.query(dialect.placeholders(`SELECT version FROM ${t.schemaVersion} WHERE version = ?`), [step.version])) as unknown[];
  if (done.length > 0) return false;
  for (const sql of step.statements(dialect.kind, t)) await qr.query(sql);
  await qr.query(dialect.placeholders(`INSERT INTO ${t.schemaVersion} (version, name, applied_at) VALUES (?, ?, ?)`), [
    step.version,
    step.name,
    Date.now(),
  ]);
  return true;
}

/**
 * Migration classes for a DataSource's `migrations` option (one per schema version).
 * `down` undoes that version (version 1 drops the tables); run them in reverse order.
 */
export function priorityQueueMigrations(options: { tablePrefix?: string } = {}): Array<new () => MigrationInterface> {
  const prefix = options.tablePrefix ?? DEFAULT_TABLE_PREFIX;
  if (!isValidTablePrefix(prefix)) throw new Error(Messages.badTablePrefix(prefix));
  const t = tableNames(prefix);
  return SCHEMA_STEPS.map((step) => {
    const name = `${step.name}${prefix.replace(/[^A-Za-z0-9]/g, '')}${TIMESTAMPS[step.version]}`;
    const cls = class implements MigrationInterface {
      name = name;
      async up(qr: QueryRunner): Promise<void> {
        await applyStep(qr, step, t);
      }
      async down(qr: QueryRunner): Promise<void> {
        const dialect = dialectOf(qr.connection);
        for (const sql of step.undo(dialect.kind, t)) await qr.query(sql);
        await qr.query(dialect.placeholders(`DELETE FROM ${t.schemaVersion} WHERE version = ?`), [step.version]);
      }
    };
    Object.defineProperty(cls, 'name', { value: name });
    return cls;
  });
}
