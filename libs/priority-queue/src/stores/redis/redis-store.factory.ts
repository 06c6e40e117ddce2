import type { Cluster, Redis, RedisOptions } from 'ioredis';
import { ConfigurationError } from '../../core/errors';
import { Messages } from '../../core/messages';
import { OpenCount, STORE_BACKEND, type QueueStoreOptions, type StoreBackend } from '../../core/store-backend';
import type { TaskStore } from '../../core/task-store.port';
import { MAX_TIMER_MS } from '../../core/timers';
import { isIntIn } from '../../core/validation';
import { assertRedisConnection, describeRedis, describeValue, type RedisConnection } from './connection-check';
import { quitWithin, QUIT_WAIT_MS } from './quit';
import { validateHistoryLimit } from '../../core/validation';
import { REDIS_DEFAULT_HISTORY_LIMIT, RedisTaskStore } from './redis-task-store';
import type { ReplicaWait } from './scripts';
import { waitForRedis } from './wait-ready';

/** Default of `initTimeoutMs`. */
export const DEFAULT_REDIS_INIT_TIMEOUT_MS = 10_000;

export interface RedisStoreCommon {
  /** Isolates applications sharing one Redis (default `pq`); each queue lives under `{prefix:queue}`. */
  prefix?: string;
  /**
   * How long start-up waits for Redis to answer before it fails with StoreUnavailableError
   * (default 10 000 ms). While it waits, one log line says for what.
   */
  initTimeoutMs?: number;
  /** Redis WAIT after every write of every queue's store (see RedisTaskStoreOptions and docs/REDIS.md, "Failover"). */
  waitForReplicas?: ReplicaWait;
  /**
   * Status transitions each queue's store keeps per task for TaskManager.history() and the
   * dashboard's task page (0 = off, at most 1000). Default 0 on Redis, where it costs the server about 5% more CPU per task (docs/BENCHMARKS.md).
   */
  historyLimit?: number;
}

/** A connection you own: the library never closes it (close it yourself after app.close()). */
export interface RedisStoreWithConnection extends RedisStoreCommon {
  connection: Redis | Cluster;
  url?: never;
  options?: never;
}

/**
 * The library opens the connection (`new Redis(url, options)`, with `maxRetriesPerRequest: null`
 * unless you set it) and closes it on application shutdown.
 */
export interface RedisStoreWithUrl extends RedisStoreCommon {
  url: string;
  options?: RedisOptions;
  connection?: never;
}

/** As with `url`: the library opens (`new Redis(options)`) and closes the connection. */
export interface RedisStoreWithOptions extends RedisStoreCommon {
  options: RedisOptions;
  url?: never;
  connection?: never;
}

export type RedisStoreOptions = RedisStoreWithConnection | RedisStoreWithUrl | RedisStoreWithOptions;

export interface RedisStoreBackend extends StoreBackend {
  readonly kind: 'redis';
  /** The connection every queue's store uses (opened by the library unless you passed it). */
  readonly connection: RedisConnection;
  /** True when the library opened the connection (and so closes it). */
  readonly ownsConnection: boolean;
}

/**
 * The Redis backend of PriorityQueueModule.forRoot({ store: redisStore({...}) }): one
 * RedisTaskStore per queue on one connection. Pass `{ connection }` to share a connection you
 * own (never closed by the library), or `{ url }` / `{ options }` to let the library open it and
 * close it on shutdown.
 */
export function redisStore(options: RedisStoreOptions): RedisStoreBackend {
  if (typeof options !== 'object' || options === null) {
    throw new ConfigurationError(Messages.factoryArgument('redisStore', options, REDIS_STORE_FORMS));
  }
  const given = (['connection', 'url', 'options'] as const).filter((k) => options[k] !== undefined);
  if (given.length === 0 || (given.includes('connection') && given.length > 1)) {
    throw new ConfigurationError(Messages.factoryArgument('redisStore', options, REDIS_STORE_FORMS));
  }
  const initTimeoutMs = options.initTimeoutMs ?? DEFAULT_REDIS_INIT_TIMEOUT_MS;
  const historyLimit = validateHistoryLimit(options.historyLimit, REDIS_DEFAULT_HISTORY_LIMIT);
  if (!isIntIn(initTimeoutMs, 1, MAX_TIMER_MS)) {
    throw new ConfigurationError(Messages.invalidOption('initTimeoutMs', initTimeoutMs, 'an integer >= 1 (milliseconds)'));
  }
  let connection: RedisConnection;
  let owns: boolean;
  if (options.connection !== undefined) {
    assertRedisConnection(options.connection, 'redisStore({ connection })');
    connection = options.connection;
    owns = false;
  } else {
    const url: unknown = options.url;
    if (url !== undefined && typeof url !== 'string') {
      throw new ConfigurationError(Messages.factoryArgument('redisStore', options, REDIS_STORE_FORMS, `url is ${describeValue(url)}`));
    }
    if (options.options !== undefined && (typeof options.options !== 'object' || options.options === null)) {
      throw new ConfigurationError(Messages.factoryArgument('redisStore', options, REDIS_STORE_FORMS, `options is ${describeValue(options.options)}`));
    }
    // loaded here, not at the top: `{ connection }` users never load the library's own ioredis copy
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const IORedis = require('ioredis') as { default: new (...args: unknown[]) => Redis };
    // lazyConnect: nothing connects before the application starts (open())
    const o: RedisOptions = { maxRetriesPerRequest: null, ...options.options, lazyConnect: true };
    connection = options.url !== undefined ? new IORedis.default(options.url, o) : new IORedis.default(o);
    owns = true;
  }
  return redisBackend(connection, owns, { prefix: options.prefix, initTimeoutMs, waitForReplicas: options.waitForReplicas, historyLimit });
}

const REDIS_STORE_FORMS =
  "redisStore({ url: 'redis://host:6379' }) or redisStore({ options: { host, port } }) (the library opens and closes the connection), or redisStore({ connection: new Redis(...) }) (yours: never closed)";

/** The backend on a checked connection (also used for the `{ type: 'redis', connection }` config). */
export function redisBackend(
  conn: unknown,
  owns: boolean,
  { prefix, initTimeoutMs = DEFAULT_REDIS_INIT_TIMEOUT_MS, waitForReplicas, historyLimit }: RedisStoreCommon = {},
): RedisStoreBackend {
  assertRedisConnection(conn, "store: { type: 'redis', connection }");
  const connection: RedisConnection = conn;
  let log: (message: string) => void = () => undefined;
  const count = new OpenCount(
    () => waitForRedis(connection, initTimeoutMs, log),
    async () => {
      if (owns) await closeConnection(connection);
    },
  );
  return {
    [STORE_BACKEND]: true,
    kind: 'redis',
    connection,
    ownsConnection: owns,
    describe: () => describeRedis(connection),
    open(logger?: (message: string) => void) {
      if (logger) log = logger;
      return count.open();
    },
    close: () => count.close(),
    store(queue: string, o: QueueStoreOptions): TaskStore {
      return new RedisTaskStore({ connection, prefix, queue, agingIntervalMs: o.agingIntervalMs, fairness: o.fairness, waitForReplicas, historyLimit });
    },
    release: (store: TaskStore) => store.close(),
  };
}

/** QUIT (or, past QUIT_WAIT_MS without an answer, drop the socket) and wait until the socket is closed. */
async function closeConnection(c: RedisConnection): Promise<void> {
  if (c.status === 'end') return;
  let timer: NodeJS.Timeout | undefined;
  const ended = new Promise<void>((resolve) => {
    c.once('end', resolve);
    timer = setTimeout(resolve, QUIT_WAIT_MS); // 'end' follows QUIT's reply; never wait on it for long
    timer.unref();
  });
  await quitWithin(c);
  await ended;
  clearTimeout(timer);
}
