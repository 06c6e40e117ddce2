/**
 * Where does the wake-up of idle PostgreSQL workers go (issue 15 §3)? N idle core Workers
 * (concurrency 16, defaults), each on its own DataSource (driver default pool) as the idle bench
 * scenario runs them, one more DataSource submits. After `idleMs` of quiet, `wakes` single tasks
 * are submitted one at a time (200-1000 ms apart); for each it prints the time from the submit
 * call to the handler start, the statements the workers sent between the NOTIFY's arrival and the
 * start + 100 ms (by kind), the connections opened meanwhile, and for the last wake every hop
 * (notification arrivals, statements sent and answered) with its time. CPU per wake: this Node
 * process's (process.cpuUsage) and the PostgreSQL server's (utime + stime of the postmaster's
 * children in /proc), from the submit call to the handler start + 100 ms: what the herd costs
 * whatever the machine's load.
 * `node -r ./test/support/register.js test/bench/profile/pg-idle-wake.ts [workers] [wakes] [idleMs]`
 * PQ_CONCURRENCY sets the workers' concurrency (default 16); PQ_WINDOWS=<file> writes each wake's window
 * (hrtime µs, the clock of `--cpu-prof` samples) so that a profile can be cut to the wakes.
 */
import { DataSource } from 'typeorm';
import { PriorityQueue } from '../../../libs/priority-queue/src/core/queue';
import { TaskTypeRegistry } from '../../../libs/priority-queue/src/core/registry';
import { Worker } from '../../../libs/priority-queue/src/core/worker';
import { TypeOrmTaskStore } from '../../../libs/priority-queue/src/stores/typeorm';
import { startServers } from '../lib/servers';
import { nowMs, percentile, sleep } from '../lib/stats';
import { seededRandom } from '../lib/rng';
import { runProfile } from './support/run-profile';
import { writeFileSync } from 'node:fs';
import { postmasterOf, serverCpuMs } from './support/server-cpu';

interface Hop {
  at: number;
  what: string;
  conn: number;
}
const hops: Hop[] = [];
let connections = 0;
const ids = new WeakMap<object, number>();
const idOf = (c: object) => {
  let id = ids.get(c);
  if (id === undefined) ids.set(c, (id = ++connections));
  return id;
};

function kindOf(sql: unknown): string {
  const text = typeof sql === 'string' ? sql : ((sql as { text?: string })?.text ?? '');
  const m = /FROM "?\w*?(claim_polls|complete_and_claim|claim|[a-z_]+)\b/i.exec(text);
  return (m ? m[1] : text.replace(/\s+/g, ' ').slice(0, 40)).toLowerCase();
}

function instrument(): void {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const pg = require('pg') as { Client: { prototype: Record<string, (...a: unknown[]) => unknown> } };
  const p = pg.Client.prototype;
  const query = p.query;
  p.query = function (this: object, ...a: unknown[]) {
    const conn = idOf(this);
    const what = kindOf(a[0]);
    hops.push({ at: nowMs(), what: `send ${what}`, conn });
    const last = a.length - 1;
    const cb = a[last];
    if (typeof cb === 'function') {
      a[last] = (...r: unknown[]) => {
        hops.push({ at: nowMs(), what: `done ${what}`, conn });
        return (cb as (...x: unknown[]) => unknown)(...r);
      };
    } else if (a[0] && typeof (a[0] as { callback?: unknown }).callback === 'function') {
      const q = a[0] as { callback: (...x: unknown[]) => unknown };
      const qcb = q.callback;
      q.callback = (...r: unknown[]) => {
        hops.push({ at: nowMs(), what: `done ${what}`, conn });
        return qcb(...r);
      };
    }
    const out = query.apply(this, a);
    if (out && typeof (out as Promise<unknown>).then === 'function') {
      void (out as Promise<unknown>).then(
        () => hops.push({ at: nowMs(), what: `done ${what}`, conn }),
        () => hops.push({ at: nowMs(), what: `fail ${what}`, conn }),
      );
    }
    return out;
  };
  const connect = p.connect;
  p.connect = function (this: object, ...a: unknown[]) {
    hops.push({ at: nowMs(), what: 'connect', conn: idOf(this) });
    return connect.apply(this, a);
  };
  const emit = p.emit;
  p.emit = function (this: object, ev: unknown, ...a: unknown[]) {
    if (ev === 'notification') hops.push({ at: nowMs(), what: `notification ${String((a[0] as { channel: string }).channel).slice(-6)}`, conn: idOf(this) });
    return emit.call(this, ev, ...a);
  };
}

async function main(): Promise<void> {
  const n = Number(process.argv[2] ?? 8);
  const wakes = Number(process.argv[3] ?? 10);
  const idleMs = Number(process.argv[4] ?? 3000);
  instrument();
  const servers = await startServers(new Set(['postgres']), () => undefined);
  const url = servers.env.postgres!.url;
  const opened: Array<{ ds: DataSource; store: TypeOrmTaskStore; worker?: Worker }> = [];
  const started = new Map<number, number>();
  try {
    const registry = new TaskTypeRegistry();
    registry.register('bench', {}, { run: ({ payload }) => void started.set((payload as { i: number }).i, nowMs()) }, 'bench');
    const mk = async () => {
      const ds = new DataSource({ type: 'postgres', url, logging: false });
      await ds.initialize();
      const store = new TypeOrmTaskStore({ dataSource: ds, tablePrefix: 'wk_' });
      await store.init();
      const e: { ds: DataSource; store: TypeOrmTaskStore; worker?: Worker } = { ds, store };
      opened.push(e);
      return e;
    };
    const submitter = await mk();
    const queue = new PriorityQueue({ store: submitter.store, registry });
    for (let k = 0; k < n; k++) {
      const e = await mk();
      e.worker = new Worker({ store: e.store, registry, concurrency: Number(process.env.PQ_CONCURRENCY ?? 16) });
      await e.worker.start();
    }
    await submitter.ds.query("ALTER SYSTEM SET track_functions = 'pl'");
    await submitter.ds.query('SELECT pg_reload_conf()');
    await sleep(idleMs);
    await submitter.ds.query('SELECT pg_stat_reset()');
    const backend = Number(((await submitter.ds.query('SELECT pg_backend_pid() AS p')) as Array<{ p: number }>)[0].p);
    const postmaster = postmasterOf(backend);
    const nodeCpu: number[] = [];
    const pgCpu: number[] = [];
    const windows: Array<[number, number]> = []; // hrtime µs, the clock of --cpu-prof's samples
    const random = seededRandom(7);
    const lat: number[] = [];
    const perWake: Array<Map<string, number>> = [];
    let lastWindow: Hop[] = [];
    let t = 0;
    for (let i = 0; i < wakes; i++) {
      await sleep(200 + random() * 800);
      const from = hops.length;
      const pg0 = serverCpuMs(postmaster);
      const w0 = process.hrtime.bigint();
      const cpu0 = process.cpuUsage();
      t = nowMs();
      await queue.submit({ type: 'bench', priority: 5, payload: { i } });
      while (!started.has(i)) await sleep(1);
      const s = started.get(i)!;
      lat.push(s - t);
      await sleep(100);
      const cpu = process.cpuUsage(cpu0);
      windows.push([Number(w0 / 1000n), Number(process.hrtime.bigint() / 1000n)]);
      nodeCpu.push((cpu.user + cpu.system) / 1000);
      pgCpu.push(serverCpuMs(postmaster) - pg0);
      const window = hops.slice(from).filter((h) => h.at <= s + 100);
      const counts = new Map<string, number>();
      for (const h of window) if (!h.what.startsWith('done')) counts.set(h.what, (counts.get(h.what) ?? 0) + 1);
      perWake.push(counts);
      lastWindow = window;
      lastWindow.push({ at: s, what: '** handler start', conn: 0 });
      lastWindow.sort((x, y) => x.at - y.at);
      const fresh = window
        .filter((h) => h.what === 'connect')
        .map((c) => `c${c.conn} at ${(c.at - t).toFixed(1)} for ${hops.find((h) => h.conn === c.conn && h.what.startsWith('send'))?.what ?? '?'}`);
      console.log(`wake ${i}: ${(s - t).toFixed(2)} ms; ${[...counts].map(([k, v]) => `${k} x${v}`).join(', ')}${fresh.length ? `; new connections: ${fresh.join(', ')}` : ''}`);
    }
    console.log(`${n} workers, ${idleMs} ms idle first: wake-up p50 ${percentile(lat, 0.5).toFixed(2)} ms, max ${Math.max(...lat).toFixed(2)} ms`);
    if (process.env.PQ_WINDOWS) writeFileSync(process.env.PQ_WINDOWS, JSON.stringify(windows));
    const mean = (a: number[]) => a.reduce((x, y) => x + y, 0) / a.length;
    console.log(`CPU per wake (submit to start + 100 ms), mean: Node ${mean(nodeCpu).toFixed(1)} ms, PostgreSQL ${mean(pgCpu).toFixed(1)} ms (10 ms ticks)`);
    await sleep(50);
    for (const r of (await submitter.ds.query(
      `SELECT funcname, calls, round((total_time / calls)::numeric, 3) AS total_ms, round((self_time / calls)::numeric, 3) AS self_ms FROM pg_stat_user_functions WHERE calls > 0 ORDER BY calls DESC`,
    )) as Array<Record<string, unknown>>)
      console.log(`  server: ${String(r.funcname)} ${String(r.calls)} calls, ${String(r.total_ms)} ms total / ${String(r.self_ms)} ms self per call`);
    console.log('last wake, every hop until the handler start:');
    for (const h of lastWindow) console.log(`  ${(h.at - t).toFixed(2).padStart(7)} ms  c${String(h.conn).padEnd(4)} ${h.what}`);
  } finally {
    for (const e of opened.reverse()) {
      await e.worker?.stop().catch(() => undefined);
      await e.store.close().catch(() => undefined);
      await e.ds.destroy().catch(() => undefined);
    }
    await servers.stop();
  }
}

runProfile(main);
