/**
 * What a page of TaskStore.query (and one explain) costs on a big backlog: fills one store with
 * N tasks over L lanes (random priorities, 10% delayed, then some claimed and finished), then
 * times pages: the first PENDING_SUBMIT page, pages deep in the claim order (following the
 * cursor), filtered pages, terminal statuses newest first, and explain of a task deep in the
 * order. Wall time per call, median and best of several (a shared machine: the best is the
 * figure to compare).
 *
 * `node --max-old-space-size=8192 -r ./test/support/register.js test/bench/profile/query-page.ts [memory|redis|postgres] [tasks=1000000] [lanes=200]`
 */
import { randomUUID } from 'node:crypto';
import IORedis from 'ioredis';
import { DataSource } from 'typeorm';
import { ManualClock, TaskStatus, type NewTask, type TaskQuery, type TaskStore } from '../../../libs/priority-queue/src/core';
import { MemoryTaskStore } from '../../../libs/priority-queue/src/stores/memory';
import { RedisTaskStore } from 'nestjs-priority-queue/redis';
import { TypeOrmTaskStore } from 'nestjs-priority-queue/typeorm';
import { startServers } from '../lib/servers';
import { seededRandom } from '../lib/rng';
import { nowMs } from '../lib/stats';
import type { ServerKind } from '../target';
import { runProfile } from './support/run-profile';

async function main(): Promise<void> {
  const kind = process.argv[2] ?? 'memory';
  const n = Number(process.argv[3] ?? 1_000_000);
  const lanes = Number(process.argv[4] ?? 200);
  const kinds = new Set<ServerKind>(kind === 'redis' ? ['redis'] : kind === 'postgres' ? ['postgres'] : []);
  const servers = await startServers(kinds, () => undefined);
  const clock = new ManualClock(1_700_000_000_000);
  let store: TaskStore;
  let cleanup = async () => undefined as void;
  let analyze: (() => Promise<void>) | null = null;
  if (kind === 'redis') {
    const connection = new IORedis(servers.env.redis!.url);
    store = new RedisTaskStore({ connection, prefix: 'qp', clock });
    cleanup = async () => void connection.disconnect();
  } else if (kind === 'postgres') {
    const pg = servers.env.postgres!;
    const ds = new DataSource({ type: 'postgres', host: pg.host, port: pg.port, username: pg.user, password: pg.password, database: pg.database, extra: { max: 4 } });
    await ds.initialize();
    store = new TypeOrmTaskStore({ dataSource: ds, tablePrefix: 'qp_', clock });
    analyze = async () => void (await ds.query('VACUUM ANALYZE qp_tasks'));
    cleanup = async () => void (await ds.destroy());
  } else store = new MemoryTaskStore({ clock });
  try {
    await store.init();
    const random = seededRandom(7);
    const r = (k: number) => Math.floor(random() * k);
    const t0 = nowMs();
    const batch = 5000;
    for (let i = 0; i < n; i += batch) {
      const tasks: NewTask[] = [];
      for (let j = 0; j < Math.min(batch, n - i); j++) {
        const lane = r(lanes);
        tasks.push({
          id: randomUUID(),
          idempotencyKey: null,
          type: r(100) === 0 ? 'rare' : 'bulk',
          payload: { i: i + j },
          priority: r(21) - 10,
          providerKey: `p${lane % 4}`,
          accountId: null,
          tenantId: `t${lane}`,
          concurrencyKey: null,
          delayMs: r(10) === 0 ? 3_600_000 : 0,
          timeoutMs: null,
          maxAttempts: 3,
          idempotent: true,
        });
      }
      await store.create(tasks);
      clock.advance(1);
    }
    // some history: 20,000 claimed and finished (half failed)
    for (let k = 0; k < 20; k++) {
      const { claimed } = await store.claimSubmissions({ owner: 'w', limit: 1000, leaseMs: 60_000 });
      for (const [i, t] of claimed.entries()) {
        await store.complete({ id: t.id, leaseId: t.leaseId!, version: t.version }, { status: i % 2 ? TaskStatus.SUCCEEDED : TaskStatus.FAILED, error: i % 2 ? null : 'x' });
      }
    }
    // PostgreSQL: statistics as autovacuum would have them on a table of this size
    if (kind === 'postgres') await analyze!();
    console.log(`${kind}: ${n} tasks over ${lanes} lanes (tenants), filled in ${((nowMs() - t0) / 1000).toFixed(0)} s`);

    const time = async (label: string, fn: () => Promise<unknown>, reps = 7) => {
      const ms: number[] = [];
      for (let i = 0; i < reps; i++) {
        const a = nowMs();
        await fn();
        ms.push(nowMs() - a);
      }
      ms.sort((a, b) => a - b);
      console.log(`  ${label.padEnd(58)} median ${ms[Math.floor(ms.length / 2)].toFixed(1).padStart(7)} ms   best ${ms[0].toFixed(1).padStart(7)} ms`);
    };
    const page = (q: Omit<TaskQuery, 'limit'>, limit = 50) => store.query({ limit, ...q });
    await time('PENDING_SUBMIT, first page of 50', () => page({ status: TaskStatus.PENDING_SUBMIT }));
    // a cursor 200 pages (10,000 tasks) deep
    let cursor: string | null = null;
    for (let i = 0; i < 200; i++) cursor = (await page({ status: TaskStatus.PENDING_SUBMIT, cursor })).nextCursor;
    const deep = cursor;
    await time('PENDING_SUBMIT, page of 50 after 10,000 tasks', () => page({ status: TaskStatus.PENDING_SUBMIT, cursor: deep }));
    await time('PENDING_SUBMIT, tenant t7, first page of 50', () => page({ status: TaskStatus.PENDING_SUBMIT, tenantId: 't7' }));
    await time('PENDING_SUBMIT, priority 9..10, first page of 50', () => page({ status: TaskStatus.PENDING_SUBMIT, minPriority: 9 }));
    await time('PENDING_SUBMIT, type rare (1%), first page of 50', () => page({ status: TaskStatus.PENDING_SUBMIT, type: 'rare' }));
    await time('PENDING_SUBMIT, page of 500', () => page({ status: TaskStatus.PENDING_SUBMIT }, 500));
    await time('FAILED, newest first, page of 50', () => page({ status: TaskStatus.FAILED }));
    await time('SUCCEEDED, tenant t7, page of 50', () => page({ status: TaskStatus.SUCCEEDED, tenantId: 't7' }));
    const target = (await page({ status: TaskStatus.PENDING_SUBMIT, cursor: deep }, 1)).tasks[0];
    await time('explain of a task 10,000 deep (ahead capped at 10,000)', () => store.explain(target.id), 3);
    const low = (await page({ status: TaskStatus.PENDING_SUBMIT, maxPriority: -10 }, 1)).tasks[0];
    await time('explain of a task at the lowest priority', () => store.explain(low.id), 3);
    await time('history of a finished task', async () => {
      const f = (await page({ status: TaskStatus.FAILED }, 1)).tasks[0];
      await store.history(f.id);
    });
  } finally {
    await store.close();
    await cleanup();
    await servers.stop();
  }
}

runProfile(main);
