/**
 * Chaos drains (DESIGN §3–§4 under faults): worker PROCESSES (chaos-child.ts) drain a backlog
 * of one-shot idempotent, one-shot non-idempotent and provider (polled) tasks under small
 * account / tenant / concurrency-key limits, while the test SIGKILLs workers at random moments
 * (and starts new ones), the workers kill themselves right after sending a store call (mid-claim,
 * mid-outcome-write), every client connection is killed server-side, the server restarts, and
 * (targets with `proxied`: each worker reaches the server through a proxy of its own) a worker is
 * cut off from the server for up to longer than its lease: its requests hang, then go on.
 * Nobody helps the workers: they must finish the backlog by themselves. Then, from the
 * handlers' own audit lines (chaos-child.ts):
 * - every task is terminal: idempotent ones SUCCEEDED (run at least once), non-idempotent ones
 *   run at most once (SUCCEEDED after exactly one run, else SUBMIT_UNKNOWN);
 * - every task ended exactly once: its history (store.history) has one transition into a
 *   terminal status, the last one;
 * - no task ran twice at once (handler calls of one task never overlap, across processes; a
 *   killed process's call ends when it died);
 * - no limit was exceeded at any instant (distinct tasks with a handler call running per key);
 * - no slot leaked: stats show nothing in flight, the store's own counters are back to 0.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  AdmissionControl,
  isTerminal,
  PriorityQueue,
  TaskStatus,
  TaskTypeRegistry,
  type LimitUpdate,
  type SubmitInput,
  type Task,
  type TaskStore,
} from '../../libs/priority-queue/src/core';
import { rng } from '../contract/harness';
import { TcpProxy } from '../support/tcp-proxy';
import { wallNow } from '../support/wall-clock';
import { listAll } from '../model/task-view';
import { peakUse, resourcesOf, slotLimitOf } from '../redis/support/audit-replay';
import type { ChaosChildConfig, ChaosPayload } from './chaos-child';

const ROOT = join(__dirname, '..', '..');

export interface ChaosTarget {
  name: string;
  /** What a child needs to reach the store (kind, url / nodes / dataSource, prefix). */
  child: Pick<ChaosChildConfig, 'kind' | 'url' | 'nodes' | 'dataSource' | 'prefix'>;
  /** The test's own store on the queue (submits, stats, history). */
  open(queue: string, historyLimit: number): Promise<TaskStore>;
  /**
   * The server's TCP endpoint and the child config that reaches it through a proxy: each worker
   * process then goes through a TcpProxy of its own, which the chaos partitions now and then
   * (its requests hang, nothing fails) for up to longer than the lease. None: no partitions.
   */
  proxied?: { host: string; port: number; child(proxy: TcpProxy): ChaosTarget['child'] };
  /** Kills every client connection server-side; returns how many. None (SQLite): no connection to kill. */
  killConnections?(): Promise<number>;
  /** Restarts the server (same data), if the target can. */
  restart?(): Promise<void>;
  /** The workers must send completes with claims (completeAndClaim): a store that runs one call at a time. */
  combines?: boolean;
  /** The store's own in-use counters that are not 0 (SQL stores), after a claim applied releases. */
  leftoverSlots?(queue: string): Promise<Record<string, number>>;
}

export interface ChaosOptions {
  tasks: number;
  workers: number;
  /** Chaos actions (kills, connection kills, one restart), 150-600 ms apart. */
  actions: number;
  leaseMs: number;
  selfKill: number;
  seed: number;
  /**
   * Mutually exclusive concurrency keys (limit 1 each) the tasks without k1 / k2 spread over, and
   * a quarter as many accounts of provider pb (concurrency 1 each): hundreds of lanes and limits.
   * Default 0: the few keys and accounts of LIMITS only.
   */
  lanes?: number;
}

const LIMITS: LimitUpdate[] = [
  { kind: 'provider', providerKey: 'pa', accountConcurrency: 2 },
  { kind: 'account', providerKey: 'pa', accountId: 'a1', concurrency: 1 },
  { kind: 'tenant', tenantId: 't1', quota: 2 },
  { kind: 'tenant', tenantId: 't2', quota: 3 },
  { kind: 'defaultTenant', quota: 4 },
  { kind: 'concurrencyKey', key: 'k2', limit: 2 },
];

/** LIMITS, and with `lanes` a limit of 1 on each of its keys m<i> and on each account pb:b<j>. */
function limitsOf(lanes: number): LimitUpdate[] {
  const keys: LimitUpdate[] = Array.from({ length: lanes }, (_, i) => ({ kind: 'concurrencyKey', key: `m${i}`, limit: 1 }));
  const accounts: LimitUpdate[] = Array.from({ length: Math.ceil(lanes / 4) }, (_, j) => ({ kind: 'account', providerKey: 'pb', accountId: `b${j}`, concurrency: 1 }));
  return [...LIMITS, ...keys, ...accounts];
}

/** Transitions kept per task: enough for every task's whole life here (a few recoveries included). */
const HISTORY_LIMIT = 200;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Calls `f` again after store errors (the test's own connections die too), up to ~60 s. */
async function retrying<T>(f: () => Promise<T>): Promise<T> {
  for (let i = 0; ; i++) {
    try {
      return await f();
    } catch (e) {
      if (i >= 300) throw e;
      await sleep(200);
    }
  }
}

interface Child {
  proc: ChildProcess;
  auditPath: string;
  /** Wall-clock time it was seen dead (exit event) when it did not stop gracefully. */
  diedAt: number | null;
  /** Wall-clock time right after the test sent it SIGKILL: it runs nothing after that. */
  killedAt: number | null;
  /** Its own proxy to the server (targets with `proxied`). */
  proxy: TcpProxy | null;
  stopped: boolean;
  output: string;
}

class Pool {
  readonly all: Child[] = [];
  private n = 0;

  constructor(
    private readonly base: Omit<ChaosChildConfig, 'auditPath'>,
    private readonly dir: string,
    private readonly proxied: ChaosTarget['proxied'],
  ) {}

  async spawn(): Promise<Child> {
    const auditPath = join(this.dir, `w${++this.n}.log`);
    const proxy = this.proxied ? await TcpProxy.start(this.proxied.host, this.proxied.port) : null;
    const via = proxy ? this.proxied!.child(proxy) : {};
    const proc = fork(join(__dirname, 'chaos-child.ts'), [], {
      cwd: ROOT,
      execArgv: ['-r', join(ROOT, 'test', 'support', 'register.js')],
      env: { ...process.env, PQ_CHAOS: JSON.stringify({ ...this.base, ...via, auditPath }) },
      stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
    });
    const c: Child = { proc, auditPath, diedAt: null, killedAt: null, proxy, stopped: false, output: '' };
    proc.stdout?.on('data', (d) => (c.output = (c.output + d).slice(-3000)));
    proc.stderr?.on('data', (d) => (c.output = (c.output + d).slice(-3000)));
    proc.on('exit', () => {
      if (!c.stopped) c.diedAt = wallNow();
    });
    this.all.push(c);
    await new Promise<void>((resolve) => {
      proc.on('message', (m: { kind?: string }) => m?.kind === 'ready' && resolve());
      proc.on('exit', () => resolve()); // killed (by itself) before ready: counted as dead
    });
    return c;
  }

  get live(): Child[] {
    return this.all.filter((c) => c.diedAt === null && !c.stopped);
  }

  async kill(c: Child): Promise<void> {
    if (c.diedAt !== null) return;
    const gone = new Promise<void>((r) => c.proc.once('exit', () => r()));
    c.proc.kill('SIGKILL');
    c.killedAt = wallNow();
    await gone;
  }

  /** Ends every partition (before the workers are asked to stop). */
  healAll(): void {
    for (const c of this.all) c.proxy?.heal();
  }

  async closeProxies(): Promise<void> {
    for (const c of this.all) await c.proxy?.close();
  }

  async stopAll(): Promise<void> {
    this.healAll();
    await Promise.all(
      this.live.map(async (c) => {
        const gone = new Promise<void>((r) => c.proc.once('exit', () => r()));
        c.stopped = true;
        c.proc.send({ kind: 'stop' });
        const t = setTimeout(() => c.proc.kill('SIGKILL'), 20_000);
        await gone;
        clearTimeout(t);
      }),
    );
  }
}

function chaosInputs(n: number, r: (k: number) => number, lanes: number): SubmitInput[] {
  const pickOf = <T>(xs: readonly T[]) => xs[r(xs.length)];
  return Array.from({ length: n }, (_, i) => {
    const x = r(10);
    const type = x < 5 ? 'idem' : x < 7 ? 'once' : 'prov';
    const provider = pickOf(['pa', 'pa', 'pb', 'pc'] as const);
    const input: SubmitInput = {
      type,
      idempotencyKey: `c${i}`,
      priority: r(5) - 2,
      providerKey: provider,
      payload: { ms: r(4) * 3, polls: 1 + r(3) } satisfies ChaosPayload,
    };
    const account = lanes > 0 && provider === 'pb' ? `b${r(Math.ceil(lanes / 4))}` : pickOf([null, 'a1', 'a2', 'a3'] as const);
    const tenant = pickOf([null, 't1', 't2', 't3', 't4'] as const);
    const key = pickOf([null, null, null, null, null, 'k1', 'k2'] as const) ?? (lanes > 0 ? `m${r(lanes)}` : null);
    if (account) input.accountId = account;
    if (tenant) input.tenantId = tenant;
    if (key) input.concurrencyKey = key;
    return input;
  });
}

interface Call {
  id: string;
  kind: 's' | 'p';
  begin: number;
  end: number;
  /** The audit file it came from (its worker process). */
  file: string;
  /** Its end is its process's death (no E line). */
  cut?: true;
}

/**
 * Handler calls per task from every audit file; a call cut by its process's death ends then: when
 * the test sent the SIGKILL, when the process killed itself (K line), else when its exit was seen.
 */
function readCalls(children: readonly Child[]): { calls: Call[]; selfKills: number; combined: number; stalls: string[]; skews: string[] } {
  const calls: Call[] = [];
  const stalls: string[] = [];
  const skews: string[] = [];
  const origins: number[] = [];
  let selfKills = 0;
  let combined = 0;
  for (const c of children) {
    if (!existsSync(c.auditPath)) continue;
    const open = new Map<string, { kind: 's' | 'p'; begin: number }>();
    let death = Math.min(c.killedAt ?? Infinity, c.diedAt ?? Infinity);
    const file = c.auditPath.replace(/^.*\//, '');
    // the audit clock minus the store's: in [a - s - 1, b - s] for each T line (s is floored to the ms)
    let low = -Infinity;
    let high = Infinity;
    for (const line of readFileSync(c.auditPath, 'utf8').split('\n')) {
      const [k, id, kind, t] = line.split(' ');
      if (k === 'B') open.set(`${id} ${kind}`, { kind: kind as 's' | 'p', begin: Number(t) });
      else if (k === 'E') {
        const b = open.get(`${id} ${kind}`)!;
        open.delete(`${id} ${kind}`);
        calls.push({ id, kind: b.kind, begin: b.begin, end: Number(t), file });
      } else if (k === 'C') combined++;
      else if (k === 'L') stalls.push(`${file}: event loop stalled ${kind} ms until ${id}`);
      else if (k === 'O') origins.push(Number(id));
      else if (k === 'T') {
        const [a, st, b] = [Number(id), Number(kind), Number(t)];
        low = Math.max(low, a - st - 1);
        high = Math.min(high, b - st);
      }
      else if (k === 'K') {
        selfKills++;
        death = Math.min(death, Number(id));
      }
    }
    if (low > -Infinity) skews.push(`${file}: audit clock - store clock in [${low.toFixed(2)}, ${high.toFixed(2)}] ms`);
    for (const [key, b] of open) calls.push({ id: key.split(' ')[0], kind: b.kind, begin: b.begin, end: death, file, cut: true });
  }
  if (origins.length) skews.push(`performance.timeOrigin off this clock by ${Math.min(...origins).toFixed(3)} to ${Math.max(...origins).toFixed(3)} ms`);
  return { calls, selfKills, combined, stalls, skews };
}

/** For a failure: the calls of distinct tasks that overlap on each exceeded resource, with their tasks' histories. */
async function overrunReport(resources: string[], calls: readonly Call[], tasks: Map<string, Task>, store: TaskStore): Promise<string> {
  const lines: string[] = [];
  const shown = new Set<string>();
  for (const res of resources) {
    const on = calls.filter((c) => resourcesOf(tasks.get(c.id)!).includes(res)).sort((a, b) => a.begin - b.begin);
    for (let i = 0; i < on.length && lines.length < 20; i++) {
      for (let j = i + 1; j < on.length && on[j].begin < on[i].end; j++) {
        if (on[j].id === on[i].id) continue;
        lines.push(`${res}: ${JSON.stringify(on[i])} overlaps ${JSON.stringify(on[j])}`);
        shown.add(on[i].id).add(on[j].id);
      }
    }
  }
  for (const id of shown) {
    const h = await store.history(id).catch(() => []);
    lines.push(`${id} history: ${h.map((e) => `${e.at} ${e.from}->${e.to}${e.error ? ` (${e.error})` : ''}`).join(', ')}`);
  }
  return lines.join('\n');
}

export async function runChaos(target: ChaosTarget, opts: ChaosOptions): Promise<void> {
  const queue = `chaos${process.pid}x${opts.seed}`;
  const started = Date.now();
  const store = await target.open(queue, HISTORY_LIMIT);
  const registry = new TaskTypeRegistry();
  for (const t of ['idem', 'once', 'prov']) registry.register(t, t === 'once' ? { idempotent: false } : {});
  const api = new PriorityQueue({ store, registry });
  const guard = new AdmissionControl(store);
  const limits = limitsOf(opts.lanes ?? 0);
  const slotLimit = slotLimitOf(limits);
  for (const u of limits) await guard.apply(u);
  const dir = mkdtempSync(join(tmpdir(), 'pq-chaos-'));
  const pool = new Pool({ ...target.child, queue, leaseMs: opts.leaseMs, concurrency: 6, selfKill: opts.selfKill, historyLimit: HISTORY_LIMIT }, dir, target.proxied);
  const r = rng(opts.seed);
  const log: string[] = [];
  let healedBy = 0; // when the last partition ends
  try {
    for (let i = 0; i < opts.workers; i++) await pool.spawn();
    // the backlog goes in while the chaos runs (idempotency keys make a re-sent batch safe)
    const inputs = chaosInputs(opts.tasks, r, opts.lanes ?? 0);
    const submitting = (async () => {
      for (let i = 0; i < inputs.length; i += 100) {
        await retrying(() => api.submitMany(inputs.slice(i, i + 100)));
        await sleep(20);
      }
    })();
    const restartAt = target.restart ? Math.floor(opts.actions / 2) : -1;
    for (let a = 0; a < opts.actions; a++) {
      await sleep(150 + r(450));
      if (a === restartAt) {
        log.push('restart');
        await target.restart!();
      } else if (target.proxied && r(4) === 0) {
        // one worker cut off from the server for 0.3-4.3 s (the lease is 3 s): then it goes on by itself
        const live = pool.live;
        const victim = live.length ? live[r(live.length)] : null;
        const ms = 300 + r(4000);
        if (victim?.proxy) {
          victim.proxy.partition();
          setTimeout(() => victim.proxy!.heal(), ms);
          healedBy = Math.max(healedBy, Date.now() + ms);
        }
        log.push(victim ? `${victim.auditPath.replace(/^.*\//, '')} cut off for ${ms} ms at ${wallNow().toFixed(3)}` : 'no worker to cut off');
      } else if (r(3) === 0 && target.killConnections) {
        log.push(`connections killed: ${await retrying(() => target.killConnections!())}`);
      } else {
        const live = pool.live;
        const victim = live.length ? live[r(live.length)] : null;
        if (victim) await pool.kill(victim);
        log.push(victim ? `${victim.auditPath.replace(/^.*\//, '')} killed at ${victim.killedAt!.toFixed(3)} (exit seen ${(victim.diedAt! - victim.killedAt!).toFixed(1)} ms later)` : 'no worker to kill');
      }
      // keep the pool at its size (self-killed workers too)
      while (pool.live.length < opts.workers) await pool.spawn();
    }
    await submitting;
    await sleep(Math.max(0, healedBy - Date.now())); // the last partition runs its course
    pool.healAll();
    // no more help: the workers drain what is left by themselves
    const deadline = Date.now() + 150_000;
    for (;;) {
      while (pool.live.length < opts.workers) await pool.spawn(); // self-kills go on until the end
      const stats = await retrying(() => store.stats());
      const open = [TaskStatus.PENDING_SUBMIT, TaskStatus.SUBMITTING, TaskStatus.SUBMITTED, TaskStatus.RUNNING].reduce((s, st) => s + (stats.byStatus[st] ?? 0), 0);
      const total = Object.values(stats.byStatus).reduce((s, n) => s + n, 0);
      if (open === 0 && total === opts.tasks) break;
      if (Date.now() > deadline) {
        throw new Error(`not drained: ${JSON.stringify(stats.byStatus)}\nchaos: ${log.join(', ')}\n${pool.all.map((c) => c.output).join('\n---\n')}`);
      }
      await sleep(200);
    }
    const drained = Date.now();
    await pool.stopAll();

    // every task, as the store has it
    const tasks = new Map<string, Task>();
    for (const t of await listAll((status, limit, afterSeq) => api.list(status, limit, afterSeq))) tasks.set(t.id, t);
    expect(tasks.size).toBe(opts.tasks);
    const { calls, selfKills, combined, stalls, skews } = readCalls(pool.all);
    const runs = new Map<string, number>();
    for (const c of calls) if (c.kind === 's') runs.set(c.id, (runs.get(c.id) ?? 0) + 1);
    const wrong: string[] = [];
    for (const t of tasks.values()) {
      const n = runs.get(t.id) ?? 0;
      if (!isTerminal(t.status)) wrong.push(`${t.id} ${t.type} still ${t.status}`);
      else if (t.type === 'once') {
        if (n > 1) wrong.push(`${t.id} once: run ${n} times`);
        if (t.status === TaskStatus.SUCCEEDED ? n !== 1 : t.status !== TaskStatus.SUBMIT_UNKNOWN) wrong.push(`${t.id} once: ${t.status} after ${n} runs`);
      } else if (t.status !== TaskStatus.SUCCEEDED || n < 1) wrong.push(`${t.id} ${t.type}: ${t.status} after ${n} runs`);
    }
    expect(wrong).toEqual([]);

    // every task ended exactly once: one transition into a terminal status, its last one
    const ends: string[] = [];
    for (const t of tasks.values()) {
      const h = await retrying(() => store.history(t.id));
      const terminal = h.filter((e) => isTerminal(e.to));
      if (h.length >= HISTORY_LIMIT) ends.push(`${t.id}: ${h.length} transitions, more than the test keeps`);
      else if (terminal.length !== 1 || h[h.length - 1].to !== t.status) ends.push(`${t.id}: ${h.map((e) => `${e.from}->${e.to}`).join(', ')}`);
    }
    expect(ends).toEqual([]);

    // no task ran twice at once
    const byTask = new Map<string, Call[]>();
    for (const c of calls) byTask.set(c.id, [...(byTask.get(c.id) ?? []), c]);
    const overlaps: string[] = [];
    for (const [id, cs] of byTask) {
      cs.sort((a, b) => a.begin - b.begin);
      for (let i = 1; i < cs.length; i++) if (cs[i].begin < cs[i - 1].end) overlaps.push(`${id}: ${JSON.stringify(cs.slice(i - 1, i + 1))}`);
    }
    if (overlaps.length) throw new Error(`a task ran twice at once:\n${overlaps.join('\n')}\nstalls: ${stalls.join('; ') || 'none'}\nclocks: ${skews.join('; ')}\nchaos: ${log.join(', ')}`);

    // no limit exceeded at any instant (ends before begins at equal times)
    const peaks = peakUse(calls.map((c) => ({ task: tasks.get(c.id)!, start: c.begin, finish: c.end })));
    const exceeded = [...peaks].filter(([res, peak]) => peak > (slotLimit(res) ?? Infinity));
    if (exceeded.length) throw new Error(`limits exceeded: ${JSON.stringify(exceeded)}\n${await overrunReport(exceeded.map(([res]) => res), calls, tasks, store)}\nstalls: ${stalls.join('; ') || 'none'}\nclocks: ${skews.join('; ')}\nchaos: ${log.join(', ')}`);

    // no slot leaked
    const stats = await store.stats();
    expect([stats.inFlightByProvider, stats.inFlightByAccount, stats.inFlightByTenant, stats.inFlightByConcurrencyKey]).toEqual([{}, [], {}, {}]);
    if (target.leftoverSlots) {
      await store.claimSubmissions({ owner: 'check', limit: 1, leaseMs: 1000 });
      expect(await target.leftoverSlots(queue)).toEqual({});
    }
    // the drain went through the combined call where it must
    if (target.combines) expect(combined).toBeGreaterThan(0);
    // the chaos really happened
    // (processes killed by the test or by themselves, and workers cut off: a quarter of the actions on targets with a proxy)
    const partitions = log.filter((l) => l.includes(' cut off for ')).length;
    expect(pool.all.filter((c) => c.diedAt !== null).length + selfKills + partitions).toBeGreaterThan(2);
    if (process.env.PQ_CHAOS_DEBUG) {
      // eslint-disable-next-line no-console
      console.log(JSON.stringify({ target: target.name, drainedMs: drained - started, checkedMs: Date.now() - drained, processes: pool.all.length, combined, killed: pool.all.filter((c) => c.diedAt !== null).length, selfKills, clocks: skews, calls: calls.length, byStatus: stats.byStatus, log }));
    }
  } finally {
    for (const c of pool.all) if (c.diedAt === null && !c.stopped) await pool.kill(c);
    await pool.closeProxies();
    await store.close();
  }
}
