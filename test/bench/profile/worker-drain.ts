/**
 * How does the core Worker drive a store during a drain? Wraps the store to count and time its
 * calls (claims: calls, tasks asked / got, ms per call; completes: ms from call to answer) and
 * prints jobs/s and client CPU.
 * `node -r ./test/support/register.js test/bench/profile/worker-drain.ts <memory|redis|postgres|mariadb> [tasks] [concurrency] [prefetch] [claimsInFlight]`
 */
import IORedis from 'ioredis';
import { DataSource } from 'typeorm';
import { PriorityQueue } from '../../../libs/priority-queue/src/core/queue';
import { TaskTypeRegistry } from '../../../libs/priority-queue/src/core/registry';
import type { TaskStore } from '../../../libs/priority-queue/src/core/task-store.port';
import { Worker } from '../../../libs/priority-queue/src/core/worker';
import { MemoryTaskStore } from '../../../libs/priority-queue/src/stores/memory';
import { RedisTaskStore } from '../../../libs/priority-queue/src/stores/redis/redis-task-store';
import { TypeOrmTaskStore } from '../../../libs/priority-queue/src/stores/typeorm';
import { startServers } from '../lib/servers';
import { benchHistoryLimit } from '../targets/ours';
import { makeJobs } from '../scenario';
import { chunks, Countdown, nowMs, perSecond } from '../lib/stats';
import type { ServerKind } from '../target';

interface Timing {
  calls: number;
  asked: number;
  got: number;
  ms: number;
}

function timed(store: TaskStore, stats: Record<string, Timing>): TaskStore {
  const wrap = <K extends keyof TaskStore>(name: K, count: (args: unknown[], out: unknown) => [number, number]) => {
    const original = (store[name] as (...a: unknown[]) => Promise<unknown>).bind(store);
    const s: Timing = (stats[name] = { calls: 0, asked: 0, got: 0, ms: 0 });
    (store as unknown as Record<string, unknown>)[name] = async (...args: unknown[]) => {
      const t = nowMs();
      const out = await original(...args);
      s.calls++;
      s.ms += nowMs() - t;
      const [a, g] = count(args, out);
      s.asked += a;
      s.got += g;
      return out;
    };
  };
  wrap('claimSubmissions', (a, o) => [(a[0] as { limit: number }).limit, (o as { claimed: unknown[] }).claimed.length]);
  wrap('claimPolls', (a, o) => [(a[0] as { limit: number }).limit, (o as unknown[]).length]);
  wrap('complete', () => [1, 1]);
  // the combined call: its completes (asked) and its claim's tasks (got); the completes inside it
  // reach complete() only on the memory store (completeThenClaim)
  if (store.completeAndClaim) wrap('completeAndClaim', (a, o) => [(a[0] as unknown[]).length, (o as { claim: { claimed: unknown[] } }).claim.claimed.length]);
  return store;
}

/** PQ_POOL=n: the SQL pool size (default 20; 1 makes the store's calls wait for each other, parallelCalls false). */
const POOL = Number(process.env.PQ_POOL ?? 20);

async function main(): Promise<void> {
  const kind = (process.argv[2] ?? 'memory') as 'memory' | 'redis' | 'postgres' | 'mariadb';
  const n = Number(process.argv[3] ?? 20_000);
  const concurrency = Number(process.argv[4] ?? 16);
  const prefetch = Number(process.argv[5] ?? 0);
  const claimsInFlight = Number(process.argv[6] ?? 1);
  const servers = await startServers(new Set<ServerKind>(kind === 'memory' ? [] : [kind]), () => undefined);
  let store: TaskStore;
  let cleanup = async () => undefined as unknown;
  /** Redis: the server's calls and µs so far over all commands (INFO commandstats). */
  let serverStats: (() => Promise<{ calls: number; usec: number }>) | null = null;
  if (kind === 'redis') {
    const conn = new IORedis(servers.env.redis!.url);
    const admin = new IORedis(servers.env.redis!.url);
    serverStats = async () => {
      let calls = 0;
      let usec = 0;
      for (const m of (await admin.info('commandstats')).matchAll(/calls=(\d+),usec=(\d+)/g)) {
        calls += Number(m[1]);
        usec += Number(m[2]);
      }
      return { calls, usec };
    };
    store = new RedisTaskStore({ connection: conn, historyLimit: benchHistoryLimit() });
    cleanup = async () => {
      conn.disconnect();
      admin.disconnect();
    };
  } else if (kind === 'mariadb') {
    const m = servers.env.mariadb!;
    const ds = new DataSource({ type: 'mariadb', host: m.host, port: m.port, username: m.user, password: m.password, database: m.database, poolSize: POOL, logging: false });
    await ds.initialize();
    store = new TypeOrmTaskStore({ dataSource: ds, tablePrefix: 'prof_', historyLimit: benchHistoryLimit() });
    cleanup = () => ds.destroy();
  } else if (kind === 'postgres') {
    const ds = new DataSource({ type: 'postgres', url: servers.env.postgres!.url, poolSize: POOL, logging: false });
    await ds.initialize();
    store = new TypeOrmTaskStore({ dataSource: ds, tablePrefix: 'prof_', historyLimit: benchHistoryLimit() });
    cleanup = () => ds.destroy();
  } else {
    store = new MemoryTaskStore({ historyLimit: benchHistoryLimit() });
  }
  // PQ_PARALLEL=0|1 overrides the store's parallelCalls: the worker's completes ride on its
  // claims (0) or go beside them (1), everything else the same (an A/B of the rule in one tree)
  if (process.env.PQ_PARALLEL !== undefined) Object.defineProperty(store, 'parallelCalls', { value: process.env.PQ_PARALLEL === '1' });
  try {
    await store.init();
    const registry = new TaskTypeRegistry();
    let done: Countdown | null = null;
    registry.register('bench', {}, { run: () => void done?.tick() }, 'bench');
    const queue = new PriorityQueue({ store, registry });
    for (const c of chunks(makeJobs(n, 42), 1000)) await queue.submitMany(c.map((j) => ({ type: 'bench', priority: j.priority, payload: { i: j.i } })));
    const stats: Record<string, Timing> = {};
    timed(store, stats);
    done = new Countdown(n, 120_000, 'drain');
    const server0 = await serverStats?.();
    const cpu0 = process.cpuUsage();
    const t0 = nowMs();
    const worker = new Worker({ store, registry, concurrency, prefetch, claimsInFlight, leaseMs: 30_000 });
    await worker.start();
    await done.arm();
    const elapsed = nowMs() - t0;
    const cpu = process.cpuUsage(cpu0);
    const server1 = await serverStats?.();
    if (server0 && server1) console.log(`  redis server: ${((server1.calls - server0.calls) / n).toFixed(3)} commands/task, ${((server1.usec - server0.usec) / n).toFixed(1)} µs/task`);
    await worker.stop();
    console.log(`${kind}: ${n} tasks, concurrency ${concurrency}, prefetch ${prefetch}, claims in flight ${claimsInFlight}: ${elapsed.toFixed(0)} ms = ${perSecond(n, elapsed).toFixed(0)} jobs/s; client CPU ${((cpu.user + cpu.system) / 1000).toFixed(0)} ms`);
    for (const [name, s] of Object.entries(stats)) {
      if (!s.calls) continue;
      console.log(`  ${name.padEnd(17)} calls ${String(s.calls).padStart(6)}  asked ${(s.asked / s.calls).toFixed(1).padStart(5)}  got ${(s.got / s.calls).toFixed(1).padStart(5)}  ${((s.ms / s.calls) * 1000).toFixed(0).padStart(6)} µs/call`);
    }
  } finally {
    await store.close().catch(() => undefined);
    await cleanup();
    await servers.stop();
  }
}

main().then(() => process.exit(0), (e) => {
  console.error(e);
  process.exit(1);
});
