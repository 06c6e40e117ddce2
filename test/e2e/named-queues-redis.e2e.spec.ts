import { fork } from 'node:child_process';
import { join } from 'node:path';
import { Injectable, Module } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import Redis from 'ioredis';
import {
  ConfigurationError,
  getTaskManagerToken,
  OnTaskEvent,
  PriorityQueueModule,
  PriorityQueueRegistry,
  TaskStatus,
  ValidationError,
  WrongQueueError,
  type ClusterTaskEvent,
  type TaskManager,
} from 'nestjs-priority-queue';
import { RedisTaskStore, redisStore } from 'nestjs-priority-queue/redis';
import { startRedisServer, type RedisServerHandle } from '../support/servers/redis-server';
import { freePort } from '../support/servers/common';
import { createQueuesApp, EmailHandler, eventually, EventRecorder, historiesAfterOneTask, PdfHandler, Producer } from './support/queues-app';

const root = join(__dirname, '..', '..');
let server: RedisServerHandle;
let n = 0;
const prefix = () => `e2e${++n}`;

beforeAll(async () => {
  server = await startRedisServer();
}, 120_000);

afterAll(async () => {
  await server?.stop();
});

describe('named queues on Redis (e2e, real server)', () => {
  it('runs two named queues and the default queue in one app; a library-opened connection is closed on shutdown', async () => {
    const backend = redisStore({ url: server.url, prefix: prefix() });
    const app = await createQueuesApp({ store: backend });
    try {
      const p = app.get(Producer);
      const pdfs = await p.reports.submitMany(Array.from({ length: 50 }, (_, i) => ({ type: 'pdf', payload: { id: `r${i}` } })));
      const mails = await p.mail.submitMany(Array.from({ length: 50 }, (_, i) => ({ type: 'email', payload: { to: `u${i}` } })));
      await Promise.all([...pdfs.map((t) => p.reports.waitFor(t.id, { timeoutMs: 20_000 })), ...mails.map((t) => p.mail.waitFor(t.id, { timeoutMs: 20_000 }))]);
      expect(app.get(PdfHandler).ran).toHaveLength(50);
      expect(app.get(EmailHandler).sent).toHaveLength(50);
      await expect(p.mail.submit({ type: 'pdf', payload: { id: 'x' } })).rejects.toBeInstanceOf(WrongQueueError);
      // the queues are apart in Redis: each store's stats count its own tasks only
      expect((await p.reports.stats()).byStatus.SUCCEEDED).toBe(50);
      expect((await p.mail.stats()).byStatus.SUCCEEDED).toBe(50);
      expect((await p.defaults.stats()).byStatus.SUCCEEDED).toBe(0);
      expect(app.get(PriorityQueueRegistry).store('mail')).toBeInstanceOf(RedisTaskStore);
      expect(backend.ownsConnection).toBe(true);
      expect(backend.connection.status).toBe('ready');
    } finally {
      await app.close();
    }
    expect(backend.connection.status).toBe('end');
  });

  it("passes redisStore's historyLimit to every queue's store (history is off by default on Redis); a bad one is refused at the call", async () => {
    const on = await createQueuesApp({ store: redisStore({ url: server.url, prefix: prefix(), historyLimit: 2 }) });
    const off = await createQueuesApp({ store: redisStore({ url: server.url, prefix: prefix() }) });
    try {
      expect(await historiesAfterOneTask(on)).toEqual({ reports: ['SUBMITTING', 'SUCCEEDED'], mail: ['SUBMITTING', 'SUCCEEDED'] });
      expect(await historiesAfterOneTask(off)).toEqual({ reports: [], mail: [] });
    } finally {
      await on.close();
      await off.close();
    }
    expect(() => redisStore({ url: server.url, historyLimit: -1 })).toThrow(ValidationError);
  });

  it('leaves a connection the app passed open after shutdown', async () => {
    const connection = new Redis(server.url, { maxRetriesPerRequest: null });
    try {
      const app = await createQueuesApp({ store: redisStore({ connection, prefix: prefix() }) });
      const t = await app.get(Producer).mail.submit({ type: 'email', payload: { to: 'mine' } });
      await app.get(Producer).mail.waitFor(t.id, { timeoutMs: 20_000 });
      await app.close();
      expect(connection.status).toBe('ready');
      expect(await connection.ping()).toBe('PONG');
    } finally {
      connection.disconnect();
    }
  });

  it('delivers transitions made by another app (its own connections) to cluster @OnTaskEvent and waitFor', async () => {
    const pfx = prefix();
    const producer = await createQueuesApp({ store: redisStore({ url: server.url, prefix: pfx }), root: { workers: { enabled: false } } });
    const worker = await createQueuesApp({ store: redisStore({ url: server.url, prefix: pfx }) });
    try {
      const p = producer.get(Producer);
      const t = await p.reports.submit({ type: 'pdf', payload: { id: 'remote' } });
      // pollMs far beyond the timeout: only the worker app's published event can end this wait
      const done = await p.reports.waitFor(t.id, { timeoutMs: 20_000, pollMs: 600_000 });
      expect(done).toMatchObject({ status: TaskStatus.SUCCEEDED, result: { pages: 6 } });
      const seen = await eventually(() => {
        const path = producer.get(EventRecorder).clusterReports.filter((e) => e.taskId === t.id).map((e) => `${e.from ?? '-'}>${e.to}`);
        return path.length === 3 ? path : null;
      }, 'three transitions of the remote task');
      // order holds per publishing process only: the worker's two in order, the producer's creation anywhere
      expect([...seen].sort()).toEqual(['->PENDING_SUBMIT', 'PENDING_SUBMIT>SUBMITTING', 'SUBMITTING>SUCCEEDED']);
      expect(seen.filter((p) => !p.startsWith('->'))).toEqual(['PENDING_SUBMIT>SUBMITTING', 'SUBMITTING>SUCCEEDED']);
      expect(producer.get(PdfHandler).ran).toEqual([]);
      expect(producer.get(EventRecorder).reportsSucceeded).toEqual([]); // local scope: made elsewhere
      expect(worker.get(EventRecorder).reportsSucceeded.map((e) => e.taskId)).toEqual([t.id]);
    } finally {
      await producer.close();
      await worker.close();
    }
  });

  it('the README example: a worker process runs a task submitted here, and exits by itself after app.close()', async () => {
    const pfx = prefix();
    const child = fork(join(__dirname, 'support', 'redis-worker-app.ts'), [], {
      cwd: root,
      execArgv: ['-r', join(root, 'test/support/register.js')],
      env: { ...process.env, REDIS_URL: server.url, PQ_PREFIX: pfx },
      stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
    });
    let output = '';
    child.stdout!.on('data', (d) => (output += d));
    child.stderr!.on('data', (d) => (output += d));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    await new Promise<void>((resolve, reject) => {
      child.once('message', () => resolve());
      void exited.then((code) => reject(new Error(`worker process exited early (${code}): ${output}`)));
    });
    @Module({ imports: [PriorityQueueModule.registerQueue({ name: 'greetings', taskTypes: [{ type: 'greet' }] })], exports: [PriorityQueueModule] })
    class Greetings {}
    const ref = await Test.createTestingModule({
      imports: [PriorityQueueModule.forRoot({ store: redisStore({ url: server.url, prefix: pfx }), workers: { enabled: false }, logLevel: 'off' }), Greetings],
    }).compile();
    await ref.init();
    try {
      const greetings = ref.get<TaskManager>(getTaskManagerToken('greetings'));
      const t = await greetings.submit({ type: 'greet', payload: { name: 'parent' } });
      const done = await greetings.waitFor(t.id, { timeoutMs: 30_000, pollMs: 600_000 });
      expect(done.result).toBe(`hello parent from process ${child.pid}`);
    } finally {
      await ref.close();
      child.send('close');
    }
    const guard = setTimeout(() => child.kill('SIGKILL'), 50_000); // it must end by itself well before
    const code = await exited;
    clearTimeout(guard);
    expect(code).toBe(0);
    expect(output).toContain('closed');
  }, 60_000);

  it('explains a wrong store option with a clear error instead of "conn.call is not a function"', async () => {
    expect(() => redisStore(server.url as never)).toThrow(ConfigurationError);
    expect(() => redisStore(server.url as never)).toThrow(/redisStore\(\) got the string "redis:.*use redisStore\(\{ url: 'redis:\/\/host:6379' \}\)/);
    expect(() => redisStore({ connection: server.url } as never)).toThrow(/redisStore\(\{ connection \}\) must be an ioredis client.*got the string.*redisStore\(\{ url \}\)/);
    expect(() => redisStore({ url: server.url, connection: new Redis({ lazyConnect: true }) } as never)).toThrow(/use redisStore/);
    expect(() => new RedisTaskStore({ connection: server.url as never })).toThrow(/RedisTaskStore\(\{ connection \}\) must be an ioredis client/);
    const ref = await Test.createTestingModule({
      imports: [PriorityQueueModule.forRoot({ store: { type: 'redis', connection: server.url }, logLevel: 'off' })],
    })
      .compile()
      .then((r) => r.init())
      .catch((e: unknown) => e);
    expect(ref).toBeInstanceOf(ConfigurationError);
    expect((ref as Error).message).toMatch(/store: \{ type: 'redis', connection \} must be an ioredis client/);
  });

  it('fails start-up with a clear error after initTimeoutMs when Redis is down, having said what it waits for; the process then ends by itself', async () => {
    const port = await freePort(); // nothing listens there
    const child = fork(join(__dirname, 'support', 'redis-down-app.ts'), [], {
      cwd: root,
      execArgv: ['-r', join(root, 'test/support/register.js')],
      env: { ...process.env, REDIS_URL: `redis://127.0.0.1:${port}`, PQ_INIT_TIMEOUT_MS: '500', NO_COLOR: '1' },
      stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
    });
    child.disconnect();
    let output = '';
    child.stdout!.on('data', (d) => (output += d));
    child.stderr!.on('data', (d) => (output += d));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (c) => resolve(c)));
    // a process that does not end by itself fails the test (jest's timeout); it is killed then
    const guard = setTimeout(() => child.kill('SIGKILL'), 50_000);
    const code = await exited;
    clearTimeout(guard);
    expect(code).toBe(3);
    expect(output).toMatch(new RegExp(`Waiting for Redis at 127.0.0.1:${port} \\(\\w+, last error: .*ECONNREFUSED.*\\); start-up fails if it does not answer within 500 ms \\(initTimeoutMs\\)`));
    expect(output).toMatch(new RegExp(`start-up failed: STORE_UNAVAILABLE: Redis at 127.0.0.1:${port} did not answer within 500 ms \\(initTimeoutMs\\); last error: .*ECONNREFUSED`));
  }, 60_000);

  it('health: up while Redis answers, down (store) once the server is gone', async () => {
    const { PriorityQueueHealthIndicator, PriorityQueueHealthModule } = await import('nestjs-priority-queue/health');
    const { TerminusModule } = await import('@nestjs/terminus');
    const own = await startRedisServer();
    const connection = new Redis(own.url, { maxRetriesPerRequest: 1, retryStrategy: () => 100 });
    connection.on('error', () => undefined);
    const app = await createQueuesApp({
      store: redisStore({ connection, prefix: prefix() }),
      imports: [TerminusModule.forRoot({ logger: false }), PriorityQueueHealthModule],
    });
    try {
      const indicator = app.get(PriorityQueueHealthIndicator);
      const up = await indicator.isHealthy('redis-queues', { maxOldestWaitMs: 60_000, timeoutMs: 1000 });
      expect(up['redis-queues']).toMatchObject({ status: 'up', queues: { reports: { store: 'up', workers: 'running', oldestWaitMs: 0, maxOldestWaitMs: 60_000 } } });
      await own.stop();
      const down = await indicator.isHealthy('redis-queues', { timeoutMs: 500 });
      expect(down['redis-queues'].status).toBe('down');
      expect(down['redis-queues'].queues).toMatchObject({ default: { store: 'down' }, reports: { store: 'down' }, mail: { store: 'down' } });
    } finally {
      await app.close().catch(() => undefined);
      connection.disconnect();
    }
  });
});

describe('cross-process events, cluster scope only (e2e, Redis)', () => {
  it('a process that runs nothing sees every terminal transition of a busy queue, and only those it filtered', async () => {
    const pfx = prefix();
    const seen: ClusterTaskEvent[] = [];
    @Injectable()
    class Listener {
      @OnTaskEvent('terminal', { queue: 'mail', scope: 'cluster' })
      on(e: ClusterTaskEvent) {
        seen.push(e);
      }
    }
    const watcher = await createQueuesApp({ store: redisStore({ url: server.url, prefix: pfx }), root: { workers: { enabled: false } }, providers: [Listener] });
    const worker = await createQueuesApp({ store: redisStore({ url: server.url, prefix: pfx }) });
    try {
      const p = worker.get(Producer);
      const tasks = await p.mail.submitMany(Array.from({ length: 300 }, (_, i) => ({ type: 'email', payload: { to: `m${i}` } })));
      await p.reports.submit({ type: 'pdf', payload: { id: 'not-mail' } });
      await eventually(() => seen.length >= 300, '300 terminal events');
      expect(new Set(seen.map((e) => e.taskId))).toEqual(new Set(tasks.map((t) => t.id)));
      expect(seen.every((e) => e.queue === 'mail' && e.to === TaskStatus.SUCCEEDED && e.name === 'succeeded')).toBe(true);
    } finally {
      await watcher.close();
      await worker.close();
    }
  });
});
