import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { DataSource, type DataSourceOptions } from 'typeorm';
import { TypeOrmTaskStore } from '../../../libs/priority-queue/src/stores/typeorm';
import { fenceOf, TaskStatus } from '../../../libs/priority-queue/src/core/task';
import type { TaskStore } from '../../../libs/priority-queue/src/core/task-store.port';
import type { BenchEnv, BenchTarget, Profile, ServerKind } from '../target';
import { benchHistoryLimit, ourTarget, variantId, LEASE_MS, TASK_TYPE, type OurVariant } from './ours';

/** Pool size of our DataSource: enough for 16 handlers' completions plus claims and LISTEN. */
const POOL = 20;

function tablePrefix(namespace: string): string {
  return `${namespace}_`.toLowerCase();
}

interface Binding {
  id: string;
  label: string;
  server: ServerKind;
  tuning?: string;
  defaults?: string;
  /** The DataSource options; `defaults`: only what names the database (driver defaults for the pool). */
  options(namespace: string, profile: Profile): DataSourceOptions;
  dropTables(ds: DataSource, prefix: string): Promise<void>;
  dropFile?(namespace: string): void;
  seedTerminal?: boolean;
  /**
   * A server's stores share one DataSource per profile for the whole run, as an application's
   * do (and as the peers' producers keep one pool: graphile-worker's WorkerUtils, pg-boss's
   * instance); each namespace is its own tables. Without it (SQLite: one file per namespace)
   * each namespace has its own DataSource, destroyed with it.
   */
  shareSource?: boolean;
}

function typeormTarget(b: Binding, variant: OurVariant = {}): BenchTarget {
  /** One DataSource per profile (shareSource) or per namespace (SQLite: one file per namespace), made for its profile. */
  const sources = new Map<string, DataSource>();
  const namespaces = new Map<string, string>(); // namespace -> its key in sources
  const sourceFor = async (namespace: string, profile: Profile = 'tuned'): Promise<DataSource> => {
    const key = namespaces.get(namespace) ?? (b.shareSource ? `profile:${profile}` : namespace);
    namespaces.set(namespace, key);
    let ds = sources.get(key);
    if (!ds) {
      ds = new DataSource(b.options(namespace, profile));
      await ds.initialize();
      sources.set(key, ds);
    }
    return ds;
  };
  return ourTarget({
    id: b.id,
    label: b.label,
    server: b.server,
    throughputPrefetch: 2,
    tuning: b.tuning ?? `TypeOrmTaskStore, TypeORM DataSource pool ${POOL}`,
    defaults: b.defaults ?? "TypeOrmTaskStore({ dataSource, tablePrefix }) on a DataSource with the driver's default pool (10)",
    removeOnComplete: variant.removeOnComplete,
    async open() {},
    async close() {
      for (const ds of sources.values()) await ds.destroy().catch(() => undefined);
      sources.clear();
      namespaces.clear();
    },
    async createStore(namespace, profile) {
      return new TypeOrmTaskStore({ dataSource: await sourceFor(namespace, profile), tablePrefix: tablePrefix(namespace), historyLimit: benchHistoryLimit() });
    },
    async dropNamespace(namespace) {
      const key = namespaces.get(namespace);
      const ds = key === undefined ? undefined : sources.get(key);
      namespaces.delete(namespace);
      if (ds) {
        await b.dropTables(ds, tablePrefix(namespace)).catch(() => undefined);
        if (!b.shareSource) {
          await ds.destroy();
          sources.delete(key!);
        }
      }
      b.dropFile?.(namespace);
    },
    ...(b.seedTerminal
      ? {
          seedTerminal: async (store: TaskStore, namespace: string, count: number) =>
            seedTerminalRows(await sourceFor(namespace), store, tablePrefix(namespace), count),
        }
      : {}),
  });
}

/**
 * Writes `count` finished rows: one real task goes through create, claim and complete, then
 * PostgreSQL copies that row `count` times with fresh ids (so the rows look exactly like the
 * store's own history, whatever its columns).
 */
async function seedTerminalRows(ds: DataSource, store: TaskStore, prefix: string, count: number): Promise<void> {
  const [{ task }] = await store.create([
    {
      id: `seed-template-${prefix}`,
      idempotencyKey: null,
      type: TASK_TYPE,
      payload: { i: -1, p: 0 },
      priority: 0,
      providerKey: TASK_TYPE,
      accountId: null,
      tenantId: null,
      concurrencyKey: null,
      delayMs: 0,
      timeoutMs: null,
      maxAttempts: 5,
      idempotent: true,
    },
  ]);
  const claim = await store.claimSubmissions({ owner: 'seed', limit: 1, leaseMs: LEASE_MS });
  if (claim.claimed[0]?.id !== task.id) throw new Error('seedTerminal: expected to claim the template task on an empty store');
  await store.complete(fenceOf(claim.claimed[0]), { status: TaskStatus.SUCCEEDED, result: null });
  const table = `${prefix}tasks`;
  const columns: Array<{ column_name: string; column_default: string | null }> = await ds.query(
    `SELECT column_name, column_default FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = $1`,
    [table],
  );
  const copied = columns
    .filter((c) => c.column_name !== 'id' && c.column_name !== 'idempotency_key' && !(c.column_default ?? '').startsWith('nextval('))
    .map((c) => `"${c.column_name}"`);
  await ds.query(
    `INSERT INTO "${table}" (id, ${copied.join(', ')})
     SELECT 'seed-' || g, ${copied.map((c) => `t.${c}`).join(', ')}
     FROM "${table}" t, generate_series(1, $2::int) g WHERE t.id = $1`,
    [task.id, count],
  );
  await ds.query(`ANALYZE "${table}"`);
}

async function dropByPrefix(ds: DataSource, prefix: string, list: string, quote: (t: string) => string): Promise<void> {
  const rows: Array<{ name: string }> = await ds.query(list, [`${prefix}%`]);
  for (const r of rows) if (r.name.startsWith(prefix)) await ds.query(`DROP TABLE IF EXISTS ${quote(r.name)}`);
}

export function ourPostgresTarget(env: BenchEnv, variant: OurVariant = {}): BenchTarget {
  if (!env.postgres) throw new Error('ours-postgres needs a PostgreSQL server');
  const pg = env.postgres;
  return typeormTarget({
    id: variantId('ours-postgres', variant),
    label: 'ours (PostgreSQL)',
    server: 'postgres',
    seedTerminal: true,
    shareSource: true,
    options: (_, profile) => ({ type: 'postgres', url: pg.url, ...(profile === 'tuned' ? { poolSize: POOL } : {}), logging: false }),
    dropTables: (ds, prefix) =>
      dropByPrefix(
        ds,
        prefix,
        `SELECT table_name AS name FROM information_schema.tables WHERE table_schema = current_schema() AND table_name LIKE $1`,
        (t) => `"${t}" CASCADE`,
      ),
  }, variant);
}

export function ourMariaDbTarget(env: BenchEnv, variant: OurVariant = {}): BenchTarget {
  if (!env.mariadb) throw new Error('ours-mariadb needs a MariaDB server');
  const m = env.mariadb;
  return typeormTarget({
    id: variantId('ours-mariadb', variant),
    label: 'ours (MariaDB)',
    server: 'mariadb',
    shareSource: true,
    options: (_, profile) => ({
      type: 'mariadb',
      host: m.host,
      port: m.port,
      username: m.user,
      password: m.password,
      database: m.database,
      ...(profile === 'tuned' ? { poolSize: POOL } : {}),
      logging: false,
    }),
    dropTables: (ds, prefix) =>
      dropByPrefix(
        ds,
        prefix,
        `SELECT table_name AS name FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name LIKE ?`,
        (t) => `\`${t}\``,
      ),
  }, variant);
}

export function ourSqliteTarget(env: BenchEnv, variant: OurVariant = {}): BenchTarget {
  if (!env.sqliteDir) throw new Error('ours-sqlite needs a directory');
  const dir = env.sqliteDir;
  const file = (namespace: string) => join(dir, `${namespace}.sqlite`);
  return typeormTarget({
    id: variantId('ours-sqlite', variant),
    label: 'ours (SQLite)',
    server: 'sqlite',
    // WAL with synchronous=NORMAL, as SQLite recommends for concurrent readers and frequent
    // small writes; the default rollback journal fsyncs every commit (~15 ms each here).
    tuning: 'WAL, synchronous=NORMAL',
    defaults: 'TypeOrmTaskStore({ dataSource, tablePrefix }); its init() turns the rollback journal into WAL + synchronous=NORMAL (tuneSqlite, default true)',
    // defaults: the store's init() switches a rollback-journal database to WAL + NORMAL itself
    // (TypeOrmTaskStore option tuneSqlite, default true).
    options: (namespace, profile) =>
      profile === 'tuned'
        ? {
            type: 'better-sqlite3',
            database: file(namespace),
            enableWAL: true,
            prepareDatabase: (db: { pragma(s: string): unknown }) => {
              db.pragma('synchronous = NORMAL');
            },
            logging: false,
          }
        : { type: 'better-sqlite3', database: file(namespace), logging: false },
    dropTables: async () => undefined,
    dropFile: (namespace) => {
      for (const suffix of ['', '-wal', '-shm', '-journal']) rmSync(file(namespace) + suffix, { force: true });
    },
  }, variant);
}
