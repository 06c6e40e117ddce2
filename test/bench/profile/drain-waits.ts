/**
 * Where does the bench's drain WAIT? Runs the bench's own `drain` scenario on the bench's own
 * target (test/bench/scenarios/drain.ts on ours-postgres / ours-mariadb: the same worker options,
 * pool, handler and end detection as `npm run bench`) and times, from the outside (prototype and
 * pool wrappers, nothing in the library): t0 to the first handler call; the gaps between handler
 * calls (stalls) and what was in flight at each stall; the claim pipe (claims in flight, their
 * latency, the idle time between one claim's answer and the next claim); completes (latency,
 * batches); pool connections (acquire wait, callers waiting); the event-loop delay. The script
 * only imports what exists in 3f2ecfb too, so the same file measures both trees (copy it, with
 * support/run-profile.ts, into a detached checkout).
 * `node -r ./test/support/register.js test/bench/profile/drain-waits.ts [postgres|mariadb] [tasks=20000] [runs=3]`
 */
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { Client } from 'pg';
import { TypeOrmTaskStore } from '../../../libs/priority-queue/src/stores/typeorm';
import { drain } from '../scenarios/drain';
import { FULL } from '../sizes';
import { startServers } from '../lib/servers';
import { ourMariaDbTarget, ourPostgresTarget } from '../targets/ours-typeorm';
import type { BenchTarget, ServerKind, WorkerSpec } from '../target';
import { runProfile } from './support/run-profile';

const now = () => performance.now();

interface Calls {
  calls: number;
  ms: number;
  inFlight: number;
  maxInFlight: number;
  got: number;
  asked: number;
  first: number;
  /** [start, end] of every call, for the pipe's idle time. */
  spans: Array<[number, number]>;
}
const fresh = (): Calls => ({ calls: 0, ms: 0, inFlight: 0, maxInFlight: 0, got: 0, asked: 0, first: -1, spans: [] });

let calls: Record<string, Calls> = {};
let pool = { acquires: 0, waitMs: 0, waiting: 0, maxWaiting: 0, waitedCalls: 0 };
let claimedTotal = 0;
const patchedPools = new WeakSet<object>();
let lastPool: Record<string, unknown> | null = null;
/** pg: the pool's connections now (totalCount). */
const poolSize = () => String(lastPool?.totalCount ?? '?');

type AnyFn = (...a: unknown[]) => Promise<unknown>;

function patchPool(p: Record<string, unknown> | undefined): void {
  if (!p || patchedPools.has(p)) return;
  patchedPools.add(p);
  lastPool = p;
  // pg Pool.connect(cb?) (pool.query goes through it) and mysql2 pool.getConnection(cb): time from the ask to the connection
  const method = typeof p.connect === 'function' ? 'connect' : 'getConnection';
  const connect = (p[method] as (...a: unknown[]) => unknown).bind(p);
  p[method] = (...a: unknown[]) => {
    const t = now();
    pool.acquires++;
    pool.waiting++;
    pool.maxWaiting = Math.max(pool.maxWaiting, pool.waiting);
    const done = () => {
      pool.waiting--;
      const w = now() - t;
      pool.waitMs += w;
      if (w > 1) pool.waitedCalls++;
    };
    const cb = a[0];
    if (typeof cb === 'function') {
      return connect((...r: unknown[]) => {
        done();
        (cb as (...x: unknown[]) => void)(...r);
      });
    }
    const out = connect() as Promise<unknown>;
    return out.then(
      (c) => (done(), c),
      (e) => {
        done();
        throw e;
      },
    );
  };
}

function wrapStore(): void {
  const proto = TypeOrmTaskStore.prototype as unknown as Record<string, AnyFn>;
  const count: Record<string, (out: unknown) => number> = {
    claimSubmissions: (o) => (o as { claimed: unknown[] }).claimed.length,
    claimPolls: (o) => (o as unknown[]).length,
    completeAndClaim: (o) => (o as { claim: { claimed: unknown[] } }).claim.claimed.length,
  };
  const asked: Record<string, (a: unknown[]) => number> = {
    claimSubmissions: (a) => (a[0] as { limit: number }).limit,
    claimPolls: (a) => (a[0] as { limit: number }).limit,
    completeAndClaim: (a) => (a[1] as { limit: number }).limit,
  };
  for (const name of ['claimSubmissions', 'claimPolls', 'complete', 'completeAndClaim', 'sweepExpired', 'recoverExpired', 'now']) {
    const original = proto[name];
    if (!original) continue;
    proto[name] = async function (this: { dataSource?: { driver?: { master?: unknown; pool?: unknown } } }, ...a: unknown[]) {
      const d = this.dataSource?.driver;
      patchPool((d?.master ?? d?.pool) as Record<string, unknown> | undefined);
      const s = (calls[name] ??= fresh());
      const t = now();
      s.inFlight++;
      s.maxInFlight = Math.max(s.maxInFlight, s.inFlight);
      s.asked += asked[name]?.(a) ?? 0;
      try {
        const out = await original.apply(this, a);
        const g = count[name]?.(out) ?? 0;
        s.got += g;
        if (name !== 'complete') claimedTotal += g;
        return out;
      } finally {
        const e = now();
        s.inFlight--;
        s.calls++;
        if (s.first < 0) s.first = e - t;
        s.ms += e - t;
        s.spans.push([t, e]);
      }
    };
  }
}

/** Time in [from, to] covered by no span (the spans of one kind of call). */
function uncovered(spans: Array<[number, number]>, from: number, to: number): number {
  const sorted = [...spans].sort((a, b) => a[0] - b[0]);
  let idle = 0;
  let at = from;
  for (const [s, e] of sorted) {
    if (s > at) idle += Math.min(s, to) - at;
    at = Math.max(at, e);
    if (at >= to) break;
  }
  if (at < to) idle += to - at;
  return idle;
}

/**
 * Samples the other backends' state and wait events every 10 ms until stop(); stop() tells the
 * commonest (state / wait / statement) in samples per 100 samples.
 */
async function pgWaits(url: string): Promise<{ reset(): void; stop(): Promise<{ samples: number; top: string }> }> {
  const c = new Client({ connectionString: url });
  await c.connect();
  const tally = new Map<string, number>();
  let samples = 0;
  let stopped = false;
  const loop = (async () => {
    while (!stopped) {
      const { rows } = await c.query(
        `SELECT coalesce(wait_event_type, '-') || ':' || coalesce(wait_event, '-') AS w, left(regexp_replace(query, '\\s+', ' ', 'g'), 40) AS q
         FROM pg_stat_activity WHERE state = 'active' AND pid <> pg_backend_pid() AND backend_type = 'client backend'`,
      );
      samples++;
      for (const r of rows as Array<{ w: string; q: string }>) tally.set(`${r.w} ${r.q}`, (tally.get(`${r.w} ${r.q}`) ?? 0) + 1);
      await new Promise((r) => setTimeout(r, 10));
    }
  })();
  return {
    reset() {
      tally.clear();
      samples = 0;
    },
    async stop() {
      stopped = true;
      await loop;
      await c.end();
      const top = [...tally.entries()].sort((a, b) => b[1] - a[1]).slice(0, 6).map(([k, v]) => `${k} ${f((100 * v) / Math.max(1, samples), 0)}`);
      return { samples, top: top.join(' | ') };
    },
  };
}

function f(n: number, d = 1): string {
  return n.toFixed(d);
}

async function main(): Promise<void> {
  const kind = (process.argv[2] ?? 'postgres') as 'postgres' | 'mariadb';
  const n = Number(process.argv[3] ?? 20_000);
  const runs = Number(process.argv[4] ?? 3);
  const servers = await startServers(new Set<ServerKind>([kind]), () => undefined);
  wrapStore();
  const target: BenchTarget = kind === 'postgres' ? ourPostgresTarget(servers.env) : ourMariaDbTarget(servers.env);
  await target.open();
  // the handler's calls, and t0 as the scenario takes it (just before startWorker)
  let handled: number[] = [];
  let t0 = 0;
  let inFlightAt: (t: number) => string = () => '';
  const startWorker = target.startWorker.bind(target);
  target.startWorker = (spec: WorkerSpec) => {
    t0 = now();
    atT0();
    const h = spec.handler;
    return startWorker({
      ...spec,
      handler: (job) => {
        const t = now();
        handled.push(t);
        const where = inFlightAt(t);
        if (where) stallNotes.push(where);
        return h(job);
      },
    });
  };
  let stallNotes: string[] = [];
  /** Reset at t0: what runs before the worker starts (the submits) is not counted. */
  let atT0: () => void = () => undefined;
  try {
    for (let run = 1; run <= runs; run++) {
      calls = {};
      pool = { acquires: 0, waitMs: 0, waiting: 0, maxWaiting: 0, waitedCalls: 0 };
      claimedTotal = 0;
      handled = [];
      stallNotes = [];
      let last = 0;
      // at a handler call that ends a stall (> 5 ms since the previous one): what was in flight
      inFlightAt = (t) => {
        const gap = last ? t - last : 0;
        last = t;
        if (gap <= 5) return '';
        const busy = Object.entries(calls).filter(([, s]) => s.inFlight > 0).map(([k, s]) => `${k} ${s.inFlight}`);
        return `    stall ${f(gap)} ms ending at +${f(t - t0, 0)} ms (${handled.length} done, ${claimedTotal - handled.length + 1} claimed not started); in flight now: ${busy.join(', ') || 'nothing'}; pool waiting ${pool.waiting}`;
      };
      const sampler = kind === 'postgres' ? await pgWaits(servers.env.postgres!.url) : null;
      const eld = monitorEventLoopDelay({ resolution: 2 });
      eld.enable();
      atT0 = () => {
        sampler?.reset();
        eld.reset();
      };
      const [m] = await drain.run({
        target,
        env: servers.env,
        sizes: { ...FULL, drain: n },
        seed: 42,
        namespace: (s) => `w${process.pid}r${run}_${s}`,
        log: (msg) => console.error(msg),
      });
      eld.disable();
      const waits = await sampler?.stop();
      const end = handled[handled.length - 1] ?? now();
      const total = end - t0;
      const gaps: number[] = [];
      for (let i = 1; i < handled.length; i++) gaps.push(handled[i] - handled[i - 1]);
      const stall = (min: number) => gaps.filter((g) => g > min).reduce((a, b) => a + b, 0);
      console.log(`${kind} run ${run}: ${m.value?.toFixed(0)} jobs/s, ${f(total, 0)} ms from t0 to the last handler call`);
      console.log(`  t0 -> first handler ${f((handled[0] ?? end) - t0)} ms; time in handler gaps > 1 ms: ${f(stall(1), 0)} ms, > 5 ms: ${f(stall(5), 0)} ms (${gaps.filter((g) => g > 5).length} gaps)`);
      for (const [name, s] of Object.entries(calls)) {
        const idle = uncovered(s.spans, t0, end);
        console.log(
          `  ${name.padEnd(17)} calls ${String(s.calls).padStart(5)}  ${f(s.ms / Math.max(1, s.calls), 2).padStart(7)} ms/call (first ${f(s.first, 1)})  asked/got per call ${f(s.asked / Math.max(1, s.calls))}/${f(s.got / Math.max(1, s.calls))}  max in flight ${s.maxInFlight}  none in flight ${f(idle, 0)} ms (${f((100 * idle) / total)}%)`,
        );
      }
      console.log(`  pool: ${pool.acquires} acquires, wait ${f(pool.waitMs / Math.max(1, pool.acquires), 3)} ms each (total ${f(pool.waitMs, 0)} ms, ${pool.waitedCalls} waited > 1 ms), most waiting ${pool.maxWaiting}, connections at the end ${poolSize()}`);
      console.log(`  event-loop delay: mean ${f(eld.mean / 1e6, 2)} ms, p99 ${f(eld.percentile(99) / 1e6, 2)} ms, max ${f(eld.max / 1e6, 1)} ms`);
      if (waits) console.log(`  server backends (${waits.samples} samples): ${waits.top}`);
      const longest = [...stallNotes].sort((a, b) => Number(b.match(/stall ([\d.]+)/)![1]) - Number(a.match(/stall ([\d.]+)/)![1]));
      for (const s of longest.slice(0, 8)) console.log(s);
    }
  } finally {
    await target.close().catch(() => undefined);
    await servers.stop();
  }
}

runProfile(main);
