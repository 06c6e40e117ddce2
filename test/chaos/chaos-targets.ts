import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Redis, { Cluster } from 'ioredis';
import { createConnection } from 'mysql2/promise';
import { Client } from 'pg';
import { DataSource } from 'typeorm';
import { RedisTaskStore } from 'nestjs-priority-queue/redis';
import { TypeOrmTaskStore } from 'nestjs-priority-queue/typeorm';
import { CLUSTER_CLIENT_OPTIONS } from '../redis/support/cluster-client';
import { startRedisCluster } from '../support/servers/redis-cluster';
import { startRedisServer } from '../support/servers/redis-server';
import { startMariaDbServer } from '../support/servers/mariadb-server';
import { startPostgresServer, type SqlServerHandle } from '../support/servers/postgres-server';
import { dataSourceOptions } from '../typeorm/typeorm-dialects';
import type { ChaosTarget } from './chaos-run';

/** The targets of the chaos drains: a server started for the spec, and how to hurt it. */
export interface RunningTarget {
  target: ChaosTarget;
  close(): Promise<void>;
}

export async function redisTarget(): Promise<RunningTarget> {
  // fsync always: a restart loses no acknowledged write (everysec could lose the last second)
  const server = await startRedisServer({ appendOnly: true, appendFsync: 'always' });
  const connections: Redis[] = [];
  return {
    target: {
      name: 'redis',
      combines: true,
      child: { kind: 'redis', url: server.url, prefix: 'chaos' },
      proxied: { host: server.host, port: server.port, child: (proxy) => ({ kind: 'redis', url: proxy.urlFor(server.url), prefix: 'chaos' }) },
      async open(queue, historyLimit) {
        const connection = new Redis(server.url, { maxRetriesPerRequest: null });
        connection.on('error', () => undefined);
        connections.push(connection);
        const store = new RedisTaskStore({ connection, prefix: 'chaos', queue, historyLimit });
        await store.init();
        return store;
      },
      async killConnections() {
        const admin = new Redis(server.url, { maxRetriesPerRequest: 1 });
        try {
          return Number(await admin.client('KILL', 'TYPE', 'normal')) + Number(await admin.client('KILL', 'TYPE', 'pubsub'));
        } finally {
          admin.disconnect();
        }
      },
      restart: () => server.restart(),
    },
    async close() {
      for (const c of connections) c.disconnect();
      await server.stop();
    },
  };
}

export async function redisClusterTarget(): Promise<RunningTarget> {
  const cluster = await startRedisCluster();
  const clients: Cluster[] = [];
  return {
    target: {
      name: 'redis-cluster',
      child: { kind: 'redis-cluster', nodes: [...cluster.nodes], prefix: 'chaos' },
      async open(queue, historyLimit) {
        const client = new Cluster([...cluster.nodes], CLUSTER_CLIENT_OPTIONS);
        client.on('error', () => undefined);
        clients.push(client);
        const store = new RedisTaskStore({ connection: client, prefix: 'chaos', queue, historyLimit });
        await store.init();
        return store;
      },
      async killConnections() {
        let n = 0;
        for (const node of cluster.nodes) {
          const admin = new Redis(node.port, node.host, { maxRetriesPerRequest: 1 });
          try {
            n += Number(await admin.client('KILL', 'TYPE', 'normal')) + Number(await admin.client('KILL', 'TYPE', 'pubsub'));
          } finally {
            admin.disconnect();
          }
        }
        return n;
      },
    },
    async close() {
      for (const c of clients) c.disconnect();
      await cluster.stop();
    },
  };
}

/** Kills every client connection of a PostgreSQL / MariaDB server but its own; returns how many. */
function connectionKiller(kind: 'postgres' | 'mariadb', server: SqlServerHandle): () => Promise<number> {
  return kind === 'postgres'
    ? async () => {
        const admin = new Client({ connectionString: server.url });
        await admin.connect();
        try {
          const r = await admin.query(
            `SELECT count(pg_terminate_backend(pid)) AS n FROM pg_stat_activity WHERE pid <> pg_backend_pid() AND backend_type = 'client backend'`,
          );
          return Number(r.rows[0].n);
        } finally {
          await admin.end();
        }
      }
    : async () => {
        const admin = await createConnection({ host: server.host, port: server.port, user: server.user, password: server.password, database: server.database });
        try {
          const [rows] = await admin.query(`SELECT ID AS id FROM information_schema.PROCESSLIST WHERE ID <> CONNECTION_ID() AND COMMAND <> 'Daemon' AND USER <> 'system user'`);
          let n = 0;
          for (const { id } of rows as Array<{ id: number }>) {
            await admin.query(`KILL CONNECTION ${Number(id)}`).then(() => n++, () => undefined);
          }
          return n;
        } finally {
          await admin.end();
        }
      };
}

/**
 * A TypeORM target. `workerPool`: connections of each worker process's DataSource (default that
 * of dataSourceOptions); 1 makes the Worker send its completes with its claims (completeAndClaim),
 * as on any store that runs one call at a time. The test's own store keeps its pool. SQLite
 * (`server` null: a file shared by the processes): nothing to kill but processes (one killed
 * mid-transaction leaves a hot WAL the next opener recovers), no restart.
 */
async function sqlTarget(kind: 'postgres' | 'mariadb' | 'sqlite', server: SqlServerHandle | null, workerPool?: number): Promise<RunningTarget> {
  const dir = server ? null : mkdtempSync(join(tmpdir(), 'pq-chaos-sqlite-'));
  const options = dataSourceOptions(kind, server, dir ? join(dir, 'db.sqlite') : undefined);
  const childOptions = workerPool ? { ...options, extra: kind === 'postgres' ? { max: workerPool } : { connectionLimit: workerPool } } : options;
  const sources: DataSource[] = [];
  return {
    target: {
      name: workerPool ? `${kind} (workers on ${workerPool} connection${workerPool > 1 ? 's' : ''})` : kind,
      child: { kind, dataSource: childOptions },
      proxied: server ? { host: server.host, port: server.port, child: (proxy) => ({ kind, dataSource: { ...childOptions, url: proxy.urlFor(server.url) } }) } : undefined,
      combines: kind === 'sqlite' || workerPool === 1,
      async open(queue, historyLimit) {
        const dataSource = new DataSource(options as never);
        await dataSource.initialize();
        sources.push(dataSource);
        const store = new TypeOrmTaskStore({ dataSource, tablePrefix: 'ch_', queue, historyLimit });
        await store.init();
        return store;
      },
      killConnections: kind === 'sqlite' ? undefined : connectionKiller(kind, server!),
      restart: server ? () => server.restart() : undefined,
      async leftoverSlots(queue) {
        const sql = `SELECT rkey, in_use FROM ch_resources WHERE queue = ${kind === 'postgres' ? '$1' : '?'} AND in_use <> 0`;
        const rows: Array<{ rkey: string; in_use: unknown }> = await sources[0].query(sql, [queue]);
        return Object.fromEntries(rows.map((r) => [r.rkey, Number(r.in_use)]));
      },
    },
    async close() {
      for (const s of sources) await s.destroy().catch(() => undefined);
      await server?.stop();
      if (dir) rmSync(dir, { recursive: true, force: true });
    },
  };
}

export const postgresTarget = async () => sqlTarget('postgres', await startPostgresServer());
/** PostgreSQL, every worker on one connection: the Worker drains through completeAndClaim (complete_and_claim). */
export const postgresOneConnectionTarget = async () => sqlTarget('postgres', await startPostgresServer(), 1);
export const mariadbTarget = async () => sqlTarget('mariadb', await startMariaDbServer());
/** SQLite (better-sqlite3: one connection per process, so the Worker drains through completeAndClaim). */
export const sqliteTarget = () => sqlTarget('sqlite', null);
