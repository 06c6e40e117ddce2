import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DataSource } from 'typeorm';
import type { ManualClock, StorePolicies, TaskStore } from '../../libs/priority-queue/src/core';
import { TypeOrmTaskStore } from 'nestjs-priority-queue/typeorm';
import type { StoreFactory } from '../contract/task-store.contract';
import { startMariaDbServer } from '../support/servers/mariadb-server';
import { startPostgresServer, type SqlServerHandle } from '../support/servers/postgres-server';

/**
 * Real databases for the TypeORM store's tests: a throw-away PostgreSQL / MariaDB server (see
 * test/support/servers), or a temp SQLite file. Never mocks, never skipped.
 */
export type DialectName = 'postgres' | 'mariadb' | 'sqlite';

export interface OpenDatabase {
  name: DialectName;
  dataSource: DataSource;
  server: SqlServerHandle | null;
  /** DataSource options, for child processes that open their own. */
  options: Record<string, unknown>;
  close(): Promise<void>;
}

export function dataSourceOptions(name: DialectName, server: SqlServerHandle | null, file?: string): Record<string, unknown> {
  switch (name) {
    case 'postgres':
      return { type: 'postgres', url: server!.url, extra: { max: 10 } };
    case 'mariadb':
      return { type: 'mariadb', url: server!.url, extra: { connectionLimit: 10 } };
    case 'sqlite':
      return { type: 'better-sqlite3', database: file!, enableWAL: true, prepareDatabase: undefined };
  }
}

export async function openDatabase(name: DialectName): Promise<OpenDatabase> {
  let server: SqlServerHandle | null = null;
  let dir: string | null = null;
  if (name === 'postgres') server = await startPostgresServer();
  else if (name === 'mariadb') server = await startMariaDbServer();
  else dir = mkdtempSync(join(tmpdir(), 'pq-sqlite-'));
  const options = dataSourceOptions(name, server, dir ? join(dir, 'db.sqlite') : undefined);
  const dataSource = new DataSource(options as never);
  await dataSource.initialize();
  return {
    name,
    dataSource,
    server,
    options,
    async close() {
      await dataSource.destroy().catch(() => undefined);
      await server?.stop();
      if (dir) rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * The DESIGN §7 policies TypeOrmTaskStore implements per dialect (its `policies`): the generic
 * SQL path (MariaDB, SQLite) and PostgreSQL's functions.
 */
export const TYPEORM_POLICIES: Record<DialectName, StorePolicies> = {
  postgres: { fairness: true, boost: true },
  mariadb: { fairness: true, boost: true },
  sqlite: { fairness: true, boost: true },
};

/**
 * StoreFactory for the contract suite and the model-based test: one database per spec file,
 * every create() a fresh queue name in shared tables (a new queue is an empty, isolated store,
 * and costs no DDL), so each test starts in milliseconds.
 */
export function typeOrmStoreFactory(name: DialectName, label = `typeorm-${name}`): StoreFactory {
  let db: Promise<OpenDatabase> | null = null;
  let n = 0;
  const run = `${process.pid}_${Date.now().toString(36)}`;
  return {
    name: label,
    policies: TYPEORM_POLICIES[name],
    async create({ clock, agingIntervalMs, historyLimit, fairness }: { clock: ManualClock; agingIntervalMs?: number; historyLimit?: number; fairness?: 'tenant' }): Promise<TaskStore> {
      db ??= openDatabase(name);
      const { dataSource } = await db;
      return new TypeOrmTaskStore({ dataSource, tablePrefix: 'ct_', queue: `q${run}_${++n}`, clock, agingIntervalMs, historyLimit, fairness });
    },
    async teardown() {
      if (db) await (await db).close();
    },
  };
}
