/**
 * Shutdown when the store does not answer (a network partition: requests hang, nothing fails):
 * app.close() must still end, within shutdownGraceMs plus the library's bounded waits (the
 * worker's hand-backs, each shutdown step, QUIT), not hang until the route comes back. Then the
 * task the app held goes to another worker once its lease expires: nothing is lost.
 * Real Redis and PostgreSQL servers behind a TcpProxy (test/support/tcp-proxy.ts).
 */
import { Socket } from 'node:net';
import { Module } from '@nestjs/common';
import { ScheduleModule } from '@nestjs/schedule';
import { Test } from '@nestjs/testing';
import { DataSource } from 'typeorm';
import { PriorityQueueModule, PriorityTask, TaskStatus, type HandlerContext, type StoreBackend, type TaskStore } from 'nestjs-priority-queue';
import { PriorityQueue, TaskTypeRegistry, Worker } from '../../libs/priority-queue/src/core';
import { RedisTaskStore, redisStore } from 'nestjs-priority-queue/redis';
import { TypeOrmTaskStore, typeormStore } from 'nestjs-priority-queue/typeorm';
import Redis from 'ioredis';
import { startPostgresServer, type SqlServerHandle } from '../support/servers/postgres-server';
import { startRedisServer, type RedisServerHandle } from '../support/servers/redis-server';
import { TcpProxy } from '../support/tcp-proxy';
import { dataSourceOptions } from '../typeorm/typeorm-dialects';

jest.setTimeout(120_000);

const LEASE_MS = 2000;
const GRACE_MS = 500;
let started!: () => void;
let running = new Promise<void>((r) => (started = r));

@PriorityTask('slow')
class SlowHandler {
  async run({ signal }: HandlerContext) {
    started();
    await new Promise<void>((resolve) => {
      const t = setTimeout(resolve, 60_000);
      signal.addEventListener('abort', () => {
        clearTimeout(t);
        resolve();
      });
    });
    signal.throwIfAborted();
    return 'done';
  }
}

async function appOn(store: StoreBackend) {
  @Module({
    imports: [ScheduleModule.forRoot(), PriorityQueueModule.forRoot({ store, logLevel: 'error', workers: { leaseMs: LEASE_MS, shutdownGraceMs: GRACE_MS, idlePollMs: 50, recoverEveryMs: 200 } })],
    providers: [SlowHandler],
  })
  class AppModule {}
  const moduleRef = await Test.createTestingModule({ imports: [AppModule] }).compile();
  const app = moduleRef.createNestApplication();
  await app.init();
  return app;
}

/** Runs the task to its end on a healthy store of the same queue (its lease expires first). */
async function finishElsewhere(store: TaskStore, id: string): Promise<TaskStatus> {
  const registry = new TaskTypeRegistry();
  registry.register('slow', {}, { run: () => 'elsewhere' }, 'Elsewhere');
  const worker = new Worker({ store, registry, leaseMs: LEASE_MS, idlePollMs: 50, recoverEveryMs: 200, onError: () => undefined });
  await worker.start();
  try {
    for (let i = 0; i < 400; i++) {
      const t = await store.get(id);
      if (t && t.status === TaskStatus.SUCCEEDED) return t.status;
      await new Promise((r) => setTimeout(r, 50));
    }
    return (await store.get(id))!.status;
  } finally {
    await worker.stop();
  }
}

/**
 * With a handler of the app running, cuts the app off its store (the proxy) and closes the app:
 * it ends within the grace, the hand-back wait (min(5 s, leaseMs)) and the shutdown steps' waits
 * (each at most 5 s, QUIT 1 s), not after 40 s; then the task runs to its end elsewhere.
 */
async function expectClosedInTime(app: { close(): Promise<void> }, proxy: TcpProxy, store: TaskStore): Promise<void> {
  const t = await new PriorityQueue({ store, registry: registryOf() }).submit({ type: 'slow' });
  await running;
  proxy.partition();
  const t0 = Date.now();
  const closed = await Promise.race([app.close().then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), 40_000))]);
  expect({ closed, inTime: Date.now() - t0 < GRACE_MS + LEASE_MS + 15_000 }).toEqual({ closed: true, inTime: true });
  expect(await finishElsewhere(store, t.id)).toBe(TaskStatus.SUCCEEDED);
}

describe('shutdown with the store cut off (e2e, real servers)', () => {
  let redis: RedisServerHandle;
  let pg: SqlServerHandle;
  beforeAll(async () => {
    [redis, pg] = await Promise.all([startRedisServer(), startPostgresServer()]);
  }, 120_000);
  afterAll(async () => {
    await redis?.stop();
    await pg?.stop();
  });
  beforeEach(() => {
    running = new Promise<void>((r) => (started = r));
  });

  it('Redis (a connection the library opened): app.close() ends in time; the task finishes elsewhere', async () => {
    const proxy = await TcpProxy.start(redis.host, redis.port);
    const prefix = `cut${process.pid}`;
    const app = await appOn(redisStore({ url: proxy.urlFor(redis.url), prefix }));
    const mine = new Redis(redis.url, { maxRetriesPerRequest: null });
    const store = new RedisTaskStore({ connection: mine, prefix });
    try {
      await expectClosedInTime(app, proxy, store);
    } finally {
      proxy.heal();
      await store.close();
      mine.disconnect();
      await proxy.close();
    }
  });

  it('PostgreSQL (the app\'s DataSource): app.close() ends in time; the task finishes elsewhere', async () => {
    const proxy = await TcpProxy.start(pg.host, pg.port);
    const dataSource = new DataSource(dataSourceOptions('postgres', { ...pg, url: proxy.urlFor(pg.url) }) as never);
    await dataSource.initialize();
    const direct = new DataSource(dataSourceOptions('postgres', pg) as never);
    await direct.initialize();
    const app = await appOn(typeormStore({ dataSource, tablePrefix: 'cut_' }));
    const store = new TypeOrmTaskStore({ dataSource: direct, tablePrefix: 'cut_' });
    try {
      await store.init();
      await expectClosedInTime(app, proxy, store);
    } finally {
      proxy.heal();
      await store.close();
      await direct.destroy();
      await dataSource.destroy().catch(() => undefined);
      await proxy.close();
    }
  });

  it.each(['redis', 'postgres'] as const)('a %s store subscribed to wake-ups closes in time when cut off (its wake connection does not answer)', async (kind) => {
    const server = kind === 'redis' ? redis : pg;
    const proxy = await TcpProxy.start(server.host, server.port);
    const connection = kind === 'redis' ? new Redis(proxy.urlFor(redis.url), { maxRetriesPerRequest: null }) : null;
    const dataSource = kind === 'postgres' ? new DataSource(dataSourceOptions('postgres', { ...pg, url: proxy.urlFor(pg.url) }) as never) : null;
    await dataSource?.initialize();
    const store: TaskStore = connection ? new RedisTaskStore({ connection, prefix: `sub${process.pid}` }) : new TypeOrmTaskStore({ dataSource: dataSource!, tablePrefix: 'sub_' });
    try {
      await store.init();
      const socketsBefore = socketsTo(proxy.port);
      await store.subscribe!(() => undefined);
      expect(socketsTo(proxy.port)).toBeGreaterThan(socketsBefore); // the wake connection
      proxy.partition();
      const t0 = Date.now();
      const closed = await Promise.race([store.close().then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), 30_000))]);
      expect({ closed, inTime: Date.now() - t0 < 8_000 }).toEqual({ closed: true, inTime: true });
      // the wake connection's socket is dropped, not left open until TCP gives up (it would keep the process alive)
      const until = Date.now() + 2_000;
      while (socketsTo(proxy.port) > socketsBefore && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
      expect(socketsTo(proxy.port)).toBeLessThanOrEqual(socketsBefore);
    } finally {
      proxy.heal();
      connection?.disconnect();
      await dataSource?.destroy().catch(() => undefined);
      await proxy.close();
    }
  });
});

/** Client sockets of this process open to the proxy at `port` (the proxy's own sockets, in this process too, are left out). */
function socketsTo(port: number): number {
  // Node keeps no public list of open sockets; the test reads its handles
  const handles = (process as unknown as { _getActiveHandles(): unknown[] })._getActiveHandles();
  return handles.filter((h) => h instanceof Socket && h.remotePort === port && !h.destroyed).length;
}

function registryOf(): TaskTypeRegistry {
  const registry = new TaskTypeRegistry();
  registry.register('slow');
  return registry;
}
