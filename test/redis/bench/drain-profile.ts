/**
 * Local measure (not a test): one process drains a backlog through the core Worker on the Redis
 * store, the way the `drain` bench scenario does, and prints wall time, client CPU and the Redis
 * side (script calls, their µs, server CPU) for the drain alone. `--cpu-prof` writes a CPU profile
 * of the drain phase (client side) to .bench-results/prof/.
 *   node -r ./test/support/register.js test/redis/bench/drain-profile.ts [tasks=20000] [concurrency=16] [--cpu-prof]
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';
import Redis from 'ioredis';
import { PriorityQueue } from '../../../libs/priority-queue/src/core/queue';
import { TaskTypeRegistry } from '../../../libs/priority-queue/src/core/registry';
import { Worker } from '../../../libs/priority-queue/src/core/worker';
import { RedisTaskStore } from '../../../libs/priority-queue/src/redis';
import { startRedisServer } from '../../support/servers/redis-server';
import { seeded } from '../support/fixtures';

async function redisSide(admin: Redis): Promise<{ evalUsec: number; evalCalls: number; cpuMs: number }> {
  const stats = await admin.info('commandstats');
  const line = stats.split('\n').find((l) => l.startsWith('cmdstat_evalsha:')) ?? '';
  const cpu = await admin.info('cpu');
  const user = Number(/used_cpu_user:([\d.]+)/.exec(cpu)?.[1] ?? 0);
  const sys = Number(/used_cpu_sys:([\d.]+)/.exec(cpu)?.[1] ?? 0);
  return {
    evalCalls: Number(/calls=(\d+)/.exec(line)?.[1] ?? 0),
    evalUsec: Number(/usec=(\d+)/.exec(line)?.[1] ?? 0),
    cpuMs: (user + sys) * 1000,
  };
}

function post(session: Session, method: string, params?: object): Promise<any> {
  return new Promise((resolve, reject) => session.post(method, params ?? {}, (e, r) => (e ? reject(e) : resolve(r))));
}

async function main(): Promise<void> {
  const args = process.argv.slice(2).filter((a) => !a.startsWith('--'));
  const n = Number(args[0] ?? 20_000);
  const concurrency = Number(args[1] ?? 16);
  const prof = process.argv.includes('--cpu-prof');
  const server = await startRedisServer();
  const connection = new Redis(server.url, { maxRetriesPerRequest: null });
  const admin = new Redis(server.url);
  const store = new RedisTaskStore({ connection, prefix: 'drain' });
  let left = n;
  let finish: () => void = () => undefined;
  const finished = new Promise<void>((r) => (finish = r));
  const registry = new TaskTypeRegistry();
  registry.register('bench', {}, { run: async () => { if (--left === 0) finish(); return null; } });
  try {
    await store.init();
    const queue = new PriorityQueue({ store, registry });
    const r = seeded(42);
    for (let i = 0; i < n; i += 1000) {
      await queue.submitMany(
        Array.from({ length: Math.min(1000, n - i) }, (_, j) => {
          const p = Math.floor(r() * 10);
          return { type: 'bench', payload: { i: i + j, p }, priority: p };
        }),
      );
    }
    await admin.config('RESETSTAT');
    const before = await redisSide(admin);
    const session = new Session();
    if (prof) {
      session.connect();
      await post(session, 'Profiler.enable');
      await post(session, 'Profiler.start');
    }
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    const worker = new Worker({ store, registry, concurrency, batchSize: concurrency, leaseMs: 30_000 });
    await worker.start();
    await finished;
    const wall = performance.now() - t0;
    const cpu = process.cpuUsage(cpu0);
    if (prof) {
      const { profile } = await post(session, 'Profiler.stop');
      mkdirSync('.bench-results/prof', { recursive: true });
      const file = `.bench-results/prof/drain-${Date.now()}.cpuprofile`;
      writeFileSync(file, JSON.stringify(profile));
      console.log(`profile: ${file}`);
      session.disconnect();
    }
    await worker.stop();
    const after = await redisSide(admin);
    const calls = after.evalCalls - before.evalCalls;
    console.log(
      `${n} tasks at concurrency ${concurrency}: ${wall.toFixed(0)} ms = ${Math.round((n / wall) * 1000)} jobs/s; ` +
        `client CPU ${((cpu.user + cpu.system) / 1000).toFixed(0)} ms (${((cpu.user + cpu.system) / n).toFixed(1)} µs/task); ` +
        `redis CPU ${(after.cpuMs - before.cpuMs).toFixed(0)} ms, scripts ${calls} calls ${((after.evalUsec - before.evalUsec) / 1000).toFixed(0)} ms ` +
        `(${((after.evalUsec - before.evalUsec) / n).toFixed(1)} µs/task, ${(n / Math.max(1, calls)).toFixed(1)} tasks/call)`,
    );
  } finally {
    await store.close();
    connection.disconnect();
    admin.disconnect();
    await server.stop();
  }
}

main().then(
  () => process.exit(0),
  (e) => {
    console.error(e);
    process.exit(1);
  },
);
