import type { RedisOptions } from 'ioredis';
import { memoryStore, type StoreBackend } from 'nestjs-priority-queue';
// the store entry points load their driver only when a store is made
import { redisStore } from 'nestjs-priority-queue/redis';
import { typeormStore } from 'nestjs-priority-queue/typeorm';
import { redact, type StoreSelection } from './store-selection';

/**
 * The ioredis options docs/REDIS.md recommends for the store's connection: commands wait for a
 * reconnection instead of failing after 20 retries, so workers ride out a Redis restart.
 */
export const RECOMMENDED_REDIS_OPTIONS = { maxRetriesPerRequest: null } as const satisfies RedisOptions;

/** The demo's PostgreSQL pool: its two workers' handlers and claims, kept open when idle. */
const PG_POOL_SIZE = 20;

/** How long start-up waits for Redis by default before it gives up with a clear message. */
export const DEFAULT_REDIS_CONNECT_TIMEOUT_MS = 10_000;
/** At most one "Redis connection error" log line per this many ms while ioredis reconnects. */
const ERROR_LOG_EVERY_MS = 10_000;

export interface StoreConnectionOptions {
  /** Where progress and connection trouble are reported (the demo's logger; silent in tests). */
  log?: (message: string) => void;
}

/**
 * The connection the demo owns (a TypeORM DataSource or an ioredis client) and the store
 * backend handed to PriorityQueueModule (its queues `ocr` and `maintenance` live in it). The
 * library never closes a connection it was given, so the demo closes it after the application
 * has shut down.
 */
export interface StoreConnection {
  config: StoreBackend;
  close(): Promise<void>;
}

/** Opens the connection PQ_STORE asks for. Drivers are required only when selected. */
export async function openStoreConnection(selection: StoreSelection, options: StoreConnectionOptions = {}): Promise<StoreConnection> {
  const log = options.log ?? (() => undefined);
  switch (selection.kind) {
    case 'memory':
      return { config: memoryStore(), close: async () => undefined };
    case 'redis':
      return openRedis(selection.url, selection.connectTimeoutMs ?? DEFAULT_REDIS_CONNECT_TIMEOUT_MS, log);
    case 'sqlite':
      return openTypeOrm({ type: 'better-sqlite3', database: selection.path });
    case 'postgres':
      // a pool that keeps its connections (docs/TYPEORM.md, Tuning): node-pg closes one idle for
      // 10 s, and a burst after a quiet spell would otherwise meet only cold ones
      return openTypeOrm({ type: 'postgres', url: selection.url, poolSize: PG_POOL_SIZE, extra: { min: PG_POOL_SIZE } });
    case 'mysql':
      return openTypeOrm({ type: 'mysql', url: selection.url });
  }
}

/**
 * Connects with the recommended options and waits until Redis answers, at most `timeoutMs`: a
 * Redis that is down at start-up is a clear error (what, where, what to do), not an unhandled
 * "Connection is closed". Once up, connection errors are logged (throttled) while ioredis
 * reconnects by itself and commands wait.
 */
async function openRedis(url: string, timeoutMs: number, log: (m: string) => void): Promise<StoreConnection> {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { default: Redis } = require('ioredis') as typeof import('ioredis');
  const connection = new Redis(url, { ...RECOMMENDED_REDIS_OPTIONS, lazyConnect: true });
  let lastError: Error | null = null;
  let lastLogged = 0;
  let wasReady = false;
  connection.once('ready', () => (wasReady = true));
  connection.on('error', (e: Error) => {
    lastError = e;
    // before the first 'ready', start-up reports it (one "waiting" line, then the error if it gives up)
    if (!wasReady || Date.now() - lastLogged < ERROR_LOG_EVERY_MS) return;
    lastLogged = Date.now();
    log(`Redis connection error (${e.message}); reconnecting, queue commands wait`);
  });
  try {
    await untilReady(connection, timeoutMs, () => log(`waiting for Redis at ${redact(url)} (up to ${timeoutMs} ms)`));
  } catch {
    connection.disconnect();
    const why = (lastError as Error | null)?.message ?? 'no answer';
    throw new Error(
      `Redis at ${redact(url)} is not reachable (${why}) after ${timeoutMs} ms: start Redis there, or point PQ_REDIS_URL at one, or run another store (PQ_STORE=memory)`,
    );
  }
  return {
    config: redisStore({ connection, prefix: 'demo' }),
    close: async () => {
      await connection.quit().catch(() => connection.disconnect());
    },
  };
}

/** Resolves when the connection is ready; rejects after `timeoutMs` (ioredis keeps retrying until then). */
function untilReady(connection: import('ioredis').Redis, timeoutMs: number, onWait: () => void): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      connection.off('ready', ready);
      reject(new Error('timeout'));
    }, timeoutMs);
    const ready = () => {
      clearTimeout(timer);
      resolve();
    };
    connection.once('ready', ready);
    // connect() rejects at the first refused attempt while ioredis goes on retrying: the
    // 'ready' event or the timeout decides
    connection.connect().catch(() => onWait());
  });
}

async function openTypeOrm(options: Record<string, unknown>): Promise<StoreConnection> {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { DataSource } = require('typeorm') as typeof import('typeorm');
  const dataSource = new DataSource({ ...options, entities: [], synchronize: false, logging: false } as never);
  await dataSource.initialize();
  return {
    config: typeormStore({ dataSource, tablePrefix: 'demo_' }),
    close: async () => {
      if (dataSource.isInitialized) await dataSource.destroy();
    },
  };
}
