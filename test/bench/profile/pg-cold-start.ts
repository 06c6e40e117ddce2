/**
 * Where the PostgreSQL latency scenario's slow tasks wait: an idle core Worker (concurrency 16,
 * no prefetch, as the latency scenario runs it) on a fresh DataSource (poolSize 20); after 500 ms
 * idle, tasks submitted one at a time `gap` ms apart. Prints p50 / p99 of submit -> handler start,
 * the backends the pool opened during the timed part (and their connect times), the time calls
 * waited for a pooled connection, and each statement's time on the first call on a backend
 * against its later calls (a PL/pgSQL function compiles and plans its statements once per backend).
 * `node -r ./test/support/register.js test/bench/profile/pg-cold-start.ts [tasks] [gapMs] [idleMs]`
 * (idleMs: the quiet spell before the submits, default 500; past the pool's idleTimeoutMillis,
 * 10 s by default, the pool would drop idle connections the store does not keep warm).
 * PQ_NO_WARM=1: the store offers no warmUp (as on a tree without it: the cold start).
 */
import { DataSource } from 'typeorm';
import { PriorityQueue } from '../../../libs/priority-queue/src/core/queue';
import { TaskTypeRegistry } from '../../../libs/priority-queue/src/core/registry';
import { Worker } from '../../../libs/priority-queue/src/core/worker';
import { TypeOrmTaskStore } from '../../../libs/priority-queue/src/stores/typeorm';
import { startServers } from '../lib/servers';
import { nowMs, percentile, sleep } from '../lib/stats';

type Fn = (...a: unknown[]) => unknown;
interface Timed {
  first: number[];
  warm: number[];
}

let timing = false;
const connects: Array<{ at: number; ms: number }> = [];
const poolWaits: number[] = [];
const statements = new Map<string, Timed>();

function keyOf(q: unknown): string {
  const text = typeof q === 'string' ? q : ((q as { text?: string })?.text ?? '');
  if (/^WITH n AS/.test(text)) return 'create (insert-tasks.pg.ts)';
  const fn = /FROM\s+("?[\w]+"?)\s*\(/i.exec(text);
  return (fn ? `fn ${fn[1]}` : text.replace(/\s+/g, ' ').trim()).slice(0, 70);
}

/** Wraps a method that takes a node callback last or returns a promise: `done(ms)` when it settles. */
function timed(proto: Record<string, Fn>, method: string, before: (self: object, a: unknown[]) => (ms: number) => void): void {
  const original = proto[method];
  proto[method] = function (this: object, ...a: unknown[]) {
    const done = before(this, a);
    const t = nowMs();
    const cbAt = a.findIndex((x) => typeof x === 'function');
    if (cbAt >= 0) {
      const cb = a[cbAt] as Fn;
      a[cbAt] = (...r: unknown[]) => (done(nowMs() - t), cb(...r));
      return original.apply(this, a);
    }
    const out = original.apply(this, a) as unknown;
    if (out && typeof (out as Promise<unknown>).then === 'function') (out as Promise<unknown>).then(() => done(nowMs() - t), () => done(nowMs() - t));
    return out;
  };
}

function instrument(): void {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const pg = require('pg') as { Client: { prototype: Record<string, Fn> }; Pool: { prototype: Record<string, Fn> } };
  const seen = new WeakMap<object, Set<string>>();
  timed(pg.Client.prototype, 'connect', () => (ms) => timing && connects.push({ at: nowMs(), ms }));
  timed(pg.Pool.prototype, 'connect', () => (ms) => timing && poolWaits.push(ms));
  timed(pg.Client.prototype, 'query', (self, a) => {
    const key = keyOf(a[0]);
    let s = seen.get(self);
    if (!s) seen.set(self, (s = new Set()));
    const first = !s.has(key);
    s.add(key);
    return (ms) => {
      if (!timing) return;
      let e = statements.get(key);
      if (!e) statements.set(key, (e = { first: [], warm: [] }));
      (first ? e.first : e.warm).push(ms);
    };
  });
}

const f = (ms: number) => ms.toFixed(1).padStart(6);

async function main(): Promise<void> {
  const n = Number(process.argv[2] ?? 400);
  const gapMs = Number(process.argv[3] ?? 5);
  const idleMs = Number(process.argv[4] ?? 500);
  instrument();
  const servers = await startServers(new Set(['postgres']), () => undefined);
  const ds = new DataSource({ type: 'postgres', url: servers.env.postgres!.url, poolSize: 20, logging: false });
  await ds.initialize();
  const store = new TypeOrmTaskStore({ dataSource: ds, tablePrefix: 'cold_' });
  const startedAt = new Float64Array(n).fill(Number.NaN);
  const submittedAt = new Float64Array(n);
  try {
    await store.init();
    const registry = new TaskTypeRegistry();
    registry.register('bench', {}, { run: ({ payload }) => void (startedAt[(payload as { i: number }).i] = nowMs()) }, 'bench');
    const queue = new PriorityQueue({ store, registry });
    if (process.env.PQ_NO_WARM === '1') Object.defineProperty(store, 'warmUp', { value: undefined });
    const worker = new Worker({ store, registry, concurrency: 16, leaseMs: 30_000 });
    await worker.start();
    await sleep(idleMs);
    const pool = (ds.driver as unknown as { master: { totalCount: number; idleCount: number } }).master;
    console.log(`before the submits: ${pool.totalCount} pooled connections (${pool.idleCount} idle)`);
    timing = true;
    const t0 = nowMs();
    const submits: Array<Promise<unknown>> = [];
    for (let i = 0; i < n; i++) {
      const wait = t0 + i * gapMs - nowMs();
      if (wait > 0) await sleep(wait);
      submittedAt[i] = nowMs();
      submits.push(queue.submit({ type: 'bench', priority: i % 10, payload: { i } }));
    }
    await Promise.all(submits);
    while (startedAt.some(Number.isNaN)) await sleep(5);
    timing = false;
    await worker.stop();
    const lat = Array.from(startedAt, (s, k) => s - submittedAt[k]);
    console.log(`${n} tasks ${gapMs} ms apart after ${idleMs} ms idle: p50 ${percentile(lat, 0.5).toFixed(2)} ms, p99 ${percentile(lat, 0.99).toFixed(2)} ms, max ${Math.max(...lat).toFixed(1)} ms`);
    console.log(`after: ${pool.totalCount} pooled connections`);
    console.log(`connections opened during the submits: ${connects.length}${connects.length ? `, connect ${connects.map((c) => `${c.ms.toFixed(1)} ms at ${(c.at - t0).toFixed(0)}`).join(', ')}` : ''}`);
    const waits = poolWaits.slice().sort((a, b) => a - b);
    console.log(`pool.connect (wait for a connection, new ones included): ${waits.length} calls, p50 ${f(percentile(waits, 0.5))} ms, p99 ${f(percentile(waits, 0.99))} ms, max ${f(waits[waits.length - 1] ?? 0)} ms`);
    console.log('statement: first call on a backend (n, mean, max) | later calls (n, p50, p99)');
    for (const [k, e] of [...statements].sort((a, b) => b[1].warm.length + b[1].first.length - a[1].warm.length - a[1].first.length)) {
      const mean = e.first.length ? e.first.reduce((a, b) => a + b, 0) / e.first.length : 0;
      console.log(`  ${String(e.first.length).padStart(3)} ${f(mean)} ${f(Math.max(0, ...e.first))} | ${String(e.warm.length).padStart(5)} ${f(percentile(e.warm, 0.5) || 0)} ${f(percentile(e.warm, 0.99) || 0)}  ${k}`);
    }
  } finally {
    await store.close().catch(() => undefined);
    await ds.destroy();
    await servers.stop();
  }
}

main().then(
  () => process.exit(0),
  (e) => {
    console.error(e);
    process.exit(1);
  },
);
