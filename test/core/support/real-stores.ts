import Redis from 'ioredis';
import { DataSource } from 'typeorm';
import type { TaskStore } from 'nestjs-priority-queue/core';
import { MemoryTaskStore } from 'nestjs-priority-queue/stores/memory';
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

  async open(kind: StoreKind, opts: { proxy?: boolean } = {}): Promise<OpenedStore> {
    const id = `w${process.pid}_${++this.n}`;
    let store: TaskStore;
    let proxy: TcpProxy | null = null;
    switch (kind) {
      case 'memory':
        store = new MemoryTaskStore();
        break;
      case 'redis': {
        const server = await (this.redis ??= startRedisServer());
        proxy = opts.proxy ? await TcpProxy.start(server.host, server.port) : null;
        const connection = new Redis(proxy ? proxy.port : server.port, proxy ? proxy.host : server.host);
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
        const options = dataSourceOptions(kind, { ...s, url: proxy ? proxy.urlFor(s.url) : s.url });
        const dataSource = new DataSource(options as never);
        await dataSource.initialize();
        this.cleanups.push(() => dataSource.destroy());
        store = new TypeOrmTaskStore({ dataSource, tablePrefix: 'wk_', queue: id });
        break;
      }
      case 'sqlite': {
        const db = await (this.sqlite ??= openDatabase('sqlite'));
        store = new TypeOrmTaskStore({ dataSource: db.dataSource, tablePrefix: 'wk_', queue: id });
        break;
      }
    }
    if (proxy) this.cleanups.push(() => proxy!.close());
    this.cleanups.push(() => store.close());
    await store.init();
    return { kind, store, proxy };
  }

  async closeAll(): Promise<void> {
    for (const c of this.cleanups.splice(0).reverse()) await c().catch(() => undefined);
    await (await this.redis)?.stop();
    for (const s of this.sql.values()) await (await s).stop();
    await (await this.sqlite)?.close();
  }
}
