/**
 * A burst after a quiet spell on PostgreSQL (issue 15 §2, latency p99): an idle core Worker
 * (concurrency 16, defaults) on its own DataSource, one more DataSource submits. Bursts of `tasks`
 * submits `gap` ms apart, not awaited (the bench's latency scenario), each after `quietMs` of
 * nothing; prints submit -> handler start p50 / p99 per burst, the connections the two pools
 * opened during it, and how many each pool holds at its end (which side opened them). node-pg's pool closes a connection idle for idleTimeoutMillis (10 s), so each
 * burst after a longer spell meets cold connections: a connect, then every hot statement's first
 * call on a new backend (PL/pgSQL compile, plans). PQ_POOL_MIN=n passes pg-pool's `min` through
 * TypeORM's `extra` to both DataSources: that many connections are not closed when idle (pg-pool
 * does not open them ahead: the first burst opens them).
 * `node -r ./test/support/register.js test/bench/profile/pg-quiet-burst.ts [bursts] [tasks] [gapMs] [quietMs]`
 */
import { DataSource } from 'typeorm';
import { PriorityQueue } from '../../../libs/priority-queue/src/core/queue';
import { TaskTypeRegistry } from '../../../libs/priority-queue/src/core/registry';
import { Worker } from '../../../libs/priority-queue/src/core/worker';
import { TypeOrmTaskStore } from '../../../libs/priority-queue/src/stores/typeorm';
import { startServers } from '../lib/servers';
import { nowMs, percentile, sleep } from '../lib/stats';
import { runProfile } from './support/run-profile';

/** Connections pg-pool holds now (TypeORM's postgres driver keeps its pool as `master`). */
const poolSize = (ds: DataSource): number => (ds.driver as unknown as { master: { totalCount: number } }).master.totalCount;

async function main(): Promise<void> {
  const bursts = Number(process.argv[2] ?? 3);
  const tasks = Number(process.argv[3] ?? 300);
  const gap = Number(process.argv[4] ?? 5);
  const quietMs = Number(process.argv[5] ?? 12_000);
  const min = process.env.PQ_POOL_MIN ? Number(process.env.PQ_POOL_MIN) : undefined;
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const pg = require('pg') as { Client: { prototype: Record<string, (...a: unknown[]) => unknown> } };
  let connects = 0;
  const connect = pg.Client.prototype.connect;
  pg.Client.prototype.connect = function (this: unknown, ...a: unknown[]) {
    connects++;
    return connect.apply(this, a);
  };
  const servers = await startServers(new Set(['postgres']), () => undefined);
  const url = servers.env.postgres!.url;
  const open: Array<{ ds: DataSource; store: TypeOrmTaskStore }> = [];
  const mk = async () => {
    const ds = new DataSource({ type: 'postgres', url, logging: false, poolSize: 20, ...(min === undefined ? {} : { extra: { min } }) });
    await ds.initialize();
    const store = new TypeOrmTaskStore({ dataSource: ds, tablePrefix: 'qb_' });
    await store.init();
    open.push({ ds, store });
    return store;
  };
  let worker: Worker | null = null;
  try {
    const started = new Map<number, number>();
    const registry = new TaskTypeRegistry();
    registry.register('job', {}, { run: ({ payload }) => void started.set((payload as { i: number }).i, nowMs()) }, 'job');
    worker = new Worker({ store: await mk(), registry, concurrency: 16 });
    await worker.start();
    const queue = new PriorityQueue({ store: await mk(), registry });
    let next = 0;
    for (let b = 0; b < bursts; b++) {
      await sleep(b === 0 ? 2000 : quietMs);
      const before = connects;
      const submitted = new Map<number, number>();
      const pending: Array<Promise<unknown>> = [];
      for (let k = 0; k < tasks; k++) {
        const i = next++;
        submitted.set(i, nowMs());
        pending.push(queue.submit({ type: 'job', payload: { i } }));
        await sleep(gap);
      }
      await Promise.all(pending);
      while ([...submitted.keys()].some((i) => !started.has(i))) await sleep(5);
      const lat = [...submitted].map(([i, t]) => started.get(i)! - t);
      console.log(
        `burst ${b} (after ${b === 0 ? 2000 : quietMs} ms quiet): p50 ${percentile(lat, 0.5).toFixed(1)} ms, p99 ${percentile(lat, 0.99).toFixed(1)} ms, max ${Math.max(...lat).toFixed(1)} ms; connections opened ${connects - before} (open now: worker's pool ${poolSize(open[0].ds)}, submitter's ${poolSize(open[1].ds)})`,
      );
    }
  } finally {
    await worker?.stop().catch(() => undefined);
    for (const o of open) {
      await o.store.close().catch(() => undefined);
      await o.ds.destroy().catch(() => undefined);
    }
    await servers.stop();
  }
}

runProfile(main);
