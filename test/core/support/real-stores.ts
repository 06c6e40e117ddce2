import Redis from 'ioredis';
import { DataSource } from 'typeorm';
import type { TaskStore } from '../../../libs/priority-queue/src/core';
import { MemoryTaskStore } from '../../../libs/priority-queue/src/stores/memory';
import { RedisTaskStore } from 'nestjs-priority-queue/redis';
import { TypeOrmTaskStore } from 'nestjs-priority-queue/typeorm';
import { startMariaDbServer } from '../../support/servers/mariadb-server';
import { startPostgresServer, type SqlServerHandle } from '../../support/servers/postgres-server';
import { startRedisServer, type RedisServerHandle } from '../../support/servers/redis-server';
import { TcpProxy } from '../../support/tcp-proxy';
import { dataSourceOptions, openDatabase, type OpenDatabase } from '../../typeorm/typeorm-dialects';

export type StoreKind = 'memory' | 'redis' | 'postgres' | 'mariadb' | 'sqlite';

export interface OpenedStore {
  kind: StoreKind;
  /** A fresh, empty, initialised store on the server's own clock. */
  store: TaskStore;
  /** Between the store's client and its server when asked for (not for memory / sqlite). */
  proxy: TcpProxy | null;
  /**
   * Requests this store's client sent to its server so far (Redis commands, a script call
   * counted once; SQL statements), counted on the store's own connection, DataSource and pool
   * (nothing else is wrapped); 0 for memory.
   */
  requests(): number;
  /**
   * Opens another store on the same queue with a client of its own, as another process would
   * (memory: the same store; SQLite: another store on the same DataSource).
   */
  again(): Promise<OpenedStore>;
}

/**
 * Real stores for worker tests, each on the store's own clock (Redis TIME, SQL now()): one
 * server per kind and spec file, started on first use; every open() is a fresh key prefix or
 * queue, with its own client connection (through a TcpProxy when `proxy`). closeAll() in afterAll.
 */
export class RealStores {
  private redis: Promise<RedisServerHandle> | null = null;
  private sql = new Map<'postgres' | 'mariadb', Promise<SqlServerHandle>>();
  private sqlite: Promise<OpenDatabase> | null = null;
  private readonly cleanups: Array<() => Promise<unknown>> = [];
  private n = 0;

  /** `poolSize`: connections of a PostgreSQL / MariaDB DataSource (default that of dataSourceOptions). */
  async open(kind: StoreKind, opts: { proxy?: boolean; poolSize?: number } = {}): Promise<OpenedStore> {
    return this.openOn(kind, `w${process.pid}_${++this.n}`, opts, null);
  }

  private async openOn(kind: StoreKind, id: string, opts: { proxy?: boolean; poolSize?: number }, sibling: TaskStore | null): Promise<OpenedStore> {
    let store: TaskStore;
    let proxy: TcpProxy | null = null;
    const counter = { n: 0 };
    switch (kind) {
      case 'memory':
        store = sibling ?? new MemoryTaskStore(); // one process: the same store
        break;
      case 'redis': {
        const server = await (this.redis ??= startRedisServer());
        proxy = opts.proxy ? await TcpProxy.start(server.host, server.port) : null;
        const connection = new Redis(proxy ? proxy.port : server.port, proxy ? proxy.host : server.host);
        countRedis(connection, counter);
        this.cleanups.push(async () => connection.disconnect());
        store = new RedisTaskStore({ connection, prefix: id });
        break;
      }
      case 'postgres':
      case 'mariadb': {
        let server = this.sql.get(kind);
        if (!server) this.sql.set(kind, (server = kind === 'postgres' ? startPostgresServer() : startMariaDbServer()));
        const s = await server;
        proxy = opts.proxy ? await TcpProxy.start(s.host, s.port) : null;
        const base = dataSourceOptions(kind, { ...s, url: proxy ? proxy.urlFor(s.url) : s.url });
        // TypeORM lets `extra` (the driver's pool options) override poolSize: both say the same
        const options = opts.poolSize ? { ...base, poolSize: opts.poolSize, extra: kind === 'postgres' ? { max: opts.poolSize } : { connectionLimit: opts.poolSize } } : base;
        const dataSource = new DataSource(options as never);
        await dataSource.initialize();
        countSql(dataSource, counter);
        this.cleanups.push(() => dataSource.destroy());
        store = new TypeOrmTaskStore({ dataSource, tablePrefix: 'wk_', queue: id });
        break;
      }
      case 'sqlite': {
        // another store on the same queue shares the DataSource: two better-sqlite3 connections
        // of one process wait for each other's write lock synchronously (a busy timeout that
        // blocks the event loop); another process is a child process (sqliteFile)
        const db = await (this.sqlite ??= openDatabase('sqlite'));
        if (!sibling) countSql(db.dataSource, counter);
        else counter.n = NaN; // its requests are the first store's
        store = new TypeOrmTaskStore({ dataSource: db.dataSource, tablePrefix: 'wk_', queue: id });
        break;
      }
    }
    if (proxy) this.cleanups.push(() => proxy!.close());
    this.cleanups.push(() => store.close());
    await store.init();
    const opened: OpenedStore = {
      kind,
      store,
      proxy,
      requests: () => counter.n,
      again: () => this.openOn(kind, id, opts, store),
    };
    return opened;
  }

  /** The SQLite file of the stores of kind 'sqlite' (for a child process's DataSource). */
  async sqliteOptions(): Promise<Record<string, unknown>> {
    return (await (this.sqlite ??= openDatabase('sqlite'))).options;
  }

  async closeAll(): Promise<void> {
    for (const c of this.cleanups.splice(0).reverse()) await c().catch(() => undefined);
    await (await this.redis)?.stop();
    for (const s of this.sql.values()) await (await s).stop();
    await (await this.sqlite)?.close();
  }
}

/** Counts the commands sent on this connection (its subscriber duplicates are not counted: they only listen). */
function countRedis(connection: Redis, counter: { n: number }): void {
  const send = connection.sendCommand.bind(connection);
  connection.sendCommand = ((...a: Parameters<Redis['sendCommand']>) => {
    counter.n++;
    return send(...a);
  }) as Redis['sendCommand'];
}

/**
 * Counts the statements of this DataSource: every query runner's query() (the store's
 * transactions and single statements) and, on PostgreSQL, the pool's own query() (the store's
 * prepared hot paths). The LISTEN connection is not counted: it only listens.
 */
function countSql(dataSource: DataSource, counter: { n: number }): void {
  const create = dataSource.createQueryRunner.bind(dataSource);
  const wrapped = new WeakSet<object>(); // better-sqlite3 hands out one runner again and again
  dataSource.createQueryRunner = ((...a: Parameters<DataSource['createQueryRunner']>) => {
    const qr = create(...a);
    if (wrapped.has(qr)) return qr;
    wrapped.add(qr);
    const query = qr.query.bind(qr);
    qr.query = ((...q: Parameters<typeof qr.query>) => {
      counter.n++;
      return query(...q);
    }) as typeof qr.query;
    return qr;
  }) as DataSource['createQueryRunner'];
  const pool = (dataSource.driver as unknown as { master?: { query: (...a: unknown[]) => unknown } }).master;
  if (pool && dataSource.options.type === 'postgres') {
    const query = pool.query.bind(pool);
    pool.query = (...a: unknown[]) => {
      counter.n++;
      return query(...a);
    };
  }
}
