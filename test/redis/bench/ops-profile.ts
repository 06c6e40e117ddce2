/**
 * Local measure (not a test): Redis script time per task of create, claim and complete, read
 * from INFO commandstats (EVALSHA only: its time includes the commands the script calls), and
 * the wall time and client CPU of the same bulk submit through PriorityQueue.submitMany.
 *   node -r ./test/support/register.js test/redis/bench/ops-profile.ts [tasks=20000] [batch=16] [--submit-only]
 */
import Redis from 'ioredis';
import { TaskStatus, fenceOf, type NewTask, type Task } from '../../../libs/priority-queue/src/core';
import { RedisTaskStore } from '../../../libs/priority-queue/src/redis';
import { startRedisServer } from '../../support/servers/redis-server';
import { PriorityQueue } from '../../../libs/priority-queue/src/core/queue';
import { TaskTypeRegistry } from '../../../libs/priority-queue/src/core/registry';
import { noopTask, seeded } from '../support/fixtures';

async function scripts(admin: Redis): Promise<{ calls: number; usec: number; detail: string }> {
  const lines = (await admin.info('commandstats')).split('\n').filter((l) => l.startsWith('cmdstat_'));
  await admin.config('RESETSTAT');
  const ev = lines.find((l) => l.startsWith('cmdstat_evalsha:')) ?? '';
  const detail = lines
    .filter((l) => !/evalsha|config|info/.test(l))
    .map((l) => `${l.slice(8, l.indexOf(':'))}=${/calls=(\d+)/.exec(l)![1]}`)
    .join(' ');
  return { calls: Number(/calls=(\d+)/.exec(ev)?.[1] ?? 0), usec: Number(/usec=(\d+)/.exec(ev)?.[1] ?? 0), detail };
}

async function main(): Promise<void> {
  const n = Number(process.argv[2] ?? 20_000);
  const batch = Number(process.argv[3] ?? 16);
  const server = await startRedisServer();
  const connection = new Redis(server.url);
  const admin = new Redis(server.url);
  const store = new RedisTaskStore({ connection, prefix: 'ops' });
  const report = async (what: string) => {
    const s = await scripts(admin);
    console.log(`${what.padEnd(9)} ${(s.usec / n).toFixed(1).padStart(6)} µs/task  ${String(s.calls).padStart(6)} calls  ${(s.usec / Math.max(1, s.calls)).toFixed(0).padStart(5)} µs/call  ${s.detail}`);
  };
  try {
    await store.init();
    const r = seeded(7);
    const news: NewTask[] = Array.from({ length: n }, (_, i) =>
      noopTask({ type: 'bench', payload: { i, p: i % 10 }, priority: Math.floor(r() * 10), providerKey: 'bench' }),
    );
    const registry = new TaskTypeRegistry();
    registry.register('bench', {});
    const queue = new PriorityQueue({ store: new RedisTaskStore({ connection, prefix: 'ops-submit' }), registry });
    await admin.config('RESETSTAT');
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    for (let i = 0; i < n; i += 1000) {
      await queue.submitMany(news.slice(i, i + 1000).map((t) => ({ type: 'bench', payload: t.payload, priority: t.priority, providerKey: 'bench' })));
    }
    const wall = performance.now() - t0;
    const cpu = process.cpuUsage(cpu0);
    console.log(`submitMany: ${Math.round((n / wall) * 1000)} jobs/s, client CPU ${((cpu.user + cpu.system) / n).toFixed(1)} µs/task`);
    await report('create');
    await queue.store.close();
    if (process.argv.includes('--submit-only')) return;
    for (let i = 0; i < n; i += 1000) await store.create(news.slice(i, i + 1000));
    await admin.config('RESETSTAT');
    const claimed: Task[] = [];
    for (;;) {
      const c = await store.claimSubmissions({ owner: 'prof', limit: batch, leaseMs: 30_000 });
      if (!c.claimed.length) break;
      claimed.push(...c.claimed);
    }
    await report('claim');
    for (let i = 0; i < claimed.length; i += batch) {
      await Promise.all(claimed.slice(i, i + batch).map((t) => store.complete(fenceOf(t), { status: TaskStatus.SUCCEEDED, result: null })));
    }
    await report('complete');
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
