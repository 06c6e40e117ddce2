/**
 * Issue 15 §3, quiet when idle, on every store (memory, Redis, PostgreSQL, MariaDB, SQLite):
 * - an idle worker with default settings sends about one request per second at most (its store
 *   is real, its requests counted on its own connection, and its port calls by a wrapper);
 * - a task submitted to an idle worker is claimed through a wake-up (safety poll out of reach);
 * - a lost wake-up is picked up by the safety poll;
 * - the recovery sweep runs once for the workers of a queue (a lease of one period), and a
 *   sweep lease whose holder died lapses: recovery goes on.
 * Nothing asserts on time: counts are upper bounds over measured intervals (a loaded machine
 * fires timers late, never early), waits end on events.
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { PermanentError, PriorityQueue, TaskStatus, TaskTypeRegistry, Worker, type TaskStore, type WorkerOptions } from '../../libs/priority-queue/src/core';
import { countingStore, ManualTimers } from './support/counting-store';
import { RealStores, type OpenedStore, type StoreKind } from './support/real-stores';
import { sleep } from './support/run-helpers';

jest.setTimeout(180_000);

const stores = new RealStores();
afterAll(() => stores.closeAll());

const KINDS: StoreKind[] = ['memory', 'redis', 'postgres', 'mariadb', 'sqlite'];

/** Runs support/submit-child.ts: tasks created by another process; resolves with their ids. */
function submitFromChild(cfg: object): Promise<string[]> {
  const root = join(__dirname, '..', '..');
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      ['-r', join(root, 'test', 'support', 'register.js'), join(__dirname, 'support', 'submit-child.ts')],
      { cwd: root, env: { ...process.env, PQ_SUBMIT: JSON.stringify(cfg) } },
      (err, stdout, stderr) => (err ? reject(new Error(`${err.message}\n${stderr}`)) : resolve(JSON.parse(stdout.trim().split('\n').pop()!))),
    );
  });
}

function worker(store: TaskStore, started: (id: string) => void, opts: Partial<WorkerOptions> = {}) {
  const registry = new TaskTypeRegistry();
  registry.register('job', {}, { run: ({ task }) => void started(task.id) }, 'IdleHandler');
  const errors: unknown[] = [];
  const w = new Worker({ store, registry, onError: (e) => errors.push(e), ...opts });
  return { worker: w, registry, errors, queue: new PriorityQueue({ store, registry }) };
}

/** Resolves when the task's handler has started. */
function startedSet() {
  const seen = new Set<string>();
  const waiting = new Map<string, () => void>();
  return {
    started: (id: string) => {
      seen.add(id);
      waiting.get(id)?.();
    },
    until: (id: string) => (seen.has(id) ? Promise.resolve() : new Promise<void>((r) => waiting.set(id, r))),
  };
}

describe('Idle workers with default settings', () => {
  it('send about one request per second at most, on every store (all stores measured at once)', async () => {
    const opened = await Promise.all(KINDS.map((k) => stores.open(k)));
    const runs = opened.map((o) => {
      const { store, calls } = countingStore(o.store);
      return { o, calls, ...worker(store, () => undefined) };
    });
    await Promise.all(runs.map((r) => r.worker.start()));
    await sleep(1500); // start-up: clock read, subscription, first claim round
    const before = runs.map((r) => ({ requests: r.o.requests(), calls: r.calls.total() }));
    const t0 = Date.now();
    await sleep(6000);
    const seconds = (Date.now() - t0) / 1000;
    const after = runs.map((r, i) => ({
      kind: r.o.kind,
      requests: r.o.requests() - before[i].requests,
      calls: r.calls.total() - before[i].calls,
    }));
    await Promise.all(runs.map((r) => r.worker.stop()));
    // before issue 15: ~10 port calls/s on every store (claims every 250 ms, a sweep and a clock
    // read every second), 60 SQL statements/s on MariaDB and SQLite
    const limit = seconds + 2;
    expect(after.filter((a) => a.requests > limit || a.calls > limit)).toEqual([]);
    expect(runs.flatMap((r) => r.errors)).toEqual([]);
  });
});

describe.each(KINDS)('Idle worker on %s', (kind) => {
  it('starts a task submitted by another client through a wake-up (the safety poll is out of reach)', async () => {
    const own = await stores.open(kind);
    const other = await own.again(); // memory: the same store (one process)
    const s = startedSet();
    const { store, calls } = countingStore(own.store);
    const w = worker(store, s.started, { idlePollMs: 3_600_000, recoverEveryMs: 3_600_000 });
    await w.worker.start();
    await calls.answered('claimSubmissions', 1); // the start-up round is over: idle from here on
    const producer = new PriorityQueue({ store: other.store, registry: w.registry });
    for (let i = 0; i < 3; i++) {
      const t = await producer.submit({ type: 'job', payload: { i } });
      await s.until(t.id);
    }
    // and from its own client (this process)
    const t = await w.queue.submit({ type: 'job', payload: { own: true } });
    await s.until(t.id);
    await w.worker.stop();
    expect(w.errors).toEqual([]);
  });

  if (kind === 'sqlite') {
    it('starts a task submitted by another process through the change watcher', async () => {
      const own = await stores.open(kind);
      const s = startedSet();
      const { store, calls } = countingStore(own.store);
      const w = worker(store, s.started, { idlePollMs: 3_600_000, recoverEveryMs: 3_600_000 });
      await w.worker.start();
      await calls.answered('claimSubmissions', 1);
      const ids = await submitFromChild({ dataSource: await stores.sqliteOptions(), tablePrefix: 'wk_', queue: (own.store as unknown as { queue: string }).queue, count: 3 });
      for (const id of ids) await s.until(id);
      await w.worker.stop();
      expect(w.errors).toEqual([]);
    });
  }

  /**
   * Waits until the idle worker has nothing left to wake it: its claim rounds answered and, on
   * MariaDB and SQLite, two reads of the change watcher (the only statements of an idle worker
   * whose polls are out of reach) that woke nobody, so that a change seen late (the slots the
   * last run gave back) cannot be taken for the next one's wake-up.
   */
  async function quiet(own: OpenedStore, calls: ReturnType<typeof countingStore>['calls']): Promise<void> {
    const claims = () => calls.by.get('claimSubmissions') ?? 0;
    await sleep(300); // wake-ups in flight (a pub/sub message, a notification)
    await calls.answered('claimSubmissions', claims());
    if (own.kind !== 'mariadb' && own.kind !== 'sqlite') return;
    for (let quietReads = 0; quietReads < 2; ) {
      await calls.answered('claimSubmissions', claims());
      const [n, r] = [claims(), own.requests()];
      while (own.requests() === r) await sleep(20);
      await sleep(200); // a claim round that read set off has begun by now
      quietReads = claims() === n ? quietReads + 1 : 0;
    }
  }

  /**
   * A worker whose handler fails each task's first run (FAILED at once), idle afterwards; `retry`
   * puts the failed task back (TaskManager.retry from another client or process): the worker
   * must start it again through a wake-up.
   */
  async function retriedTaskStarts(kind: StoreKind, retry: (own: OpenedStore, id: string) => Promise<void>): Promise<void> {
    const own = await stores.open(kind);
    const s = startedSet();
    const runs = new Map<string, number>();
    const { store, calls } = countingStore(own.store);
    const w = worker(
      store,
      (id) => {
        const n = (runs.get(id) ?? 0) + 1;
        runs.set(id, n);
        s.started(`${id}#${n}`);
        if (n === 1) throw new PermanentError('first run fails');
      },
      { idlePollMs: 3_600_000, recoverEveryMs: 3_600_000 },
    );
    await w.worker.start();
    await calls.answered('claimSubmissions', 1);
    const t = await w.queue.submit({ type: 'job' });
    await s.until(`${t.id}#1`);
    while ((await own.store.get(t.id))?.status !== TaskStatus.FAILED) await sleep(10);
    // let the rounds the run set off end, so that only the retry can start the task again
    await quiet(own, calls);
    await retry(own, t.id);
    await s.until(`${t.id}#2`);
    await w.worker.stop();
    expect(runs.get(t.id)).toBe(2);
    expect(w.errors).toEqual([]);
  }

  it('starts a task retried by another client (requeue) through a wake-up (the safety poll is out of reach)', async () => {
    await retriedTaskStarts(kind, async (own, id) => {
      const other = await own.again();
      await other.store.requeue(id);
    });
  });

  if (kind === 'sqlite') {
    it('starts a task retried by another process through the change watcher', async () => {
      await retriedTaskStarts(kind, async (own, id) => {
        await submitFromChild({ dataSource: await stores.sqliteOptions(), tablePrefix: 'wk_', queue: (own.store as unknown as { queue: string }).queue, count: 0, requeue: [id] });
      });
    });
  }

  it('claims twice per task started on an idle worker: the claim that takes it, one when its slot frees', async () => {
    const own = await stores.open(kind);
    const s = startedSet();
    // wake-ups by hand, timers by hand: nothing else claims than the worker's own rounds
    const { store, calls } = countingStore(own.store, { dropWakes: true });
    const w = worker(store, s.started, { timers: new ManualTimers() });
    await w.worker.start();
    const claims = () => calls.by.get('claimSubmissions') ?? 0;
    /** Waits until every claim asked for is answered and none follows in the next turns. */
    const settled = async () => {
      for (;;) {
        const c = claims();
        await calls.answered('claimSubmissions', c);
        for (let k = 0; k < 3; k++) await new Promise((r) => setImmediate(r));
        if (claims() === c) return;
      }
    };
    await calls.answered('claimSubmissions', 1);
    await settled(); // the start-up round is over: idle from here on
    const before = claims();
    const n = 30;
    for (let i = 0; i < n; i++) {
      const t = await w.queue.submit({ type: 'job', payload: { i } });
      w.worker.wake(false); // as the store's wake-up would
      await s.until(t.id);
      await w.worker.whenIdle();
      await settled();
    }
    await w.worker.stop();
    // before: four on a store with round trips, three on memory and SQLite: a round that claimed
    // anything claimed again at once though its claim was answered short (nothing more was
    // claimable), and the handler's return claimed though it had changed nothing in the store
    expect(claims() - before).toBeLessThanOrEqual(2 * n);
    expect(w.errors).toEqual([]);
  });

  it('a lost wake-up is picked up by the safety poll', async () => {
    const own = await stores.open(kind);
    const s = startedSet();
    const { store, calls } = countingStore(own.store, { dropWakes: true });
    const w = worker(store, s.started, { idlePollMs: 400, recoverEveryMs: 3_600_000 });
    await w.worker.start();
    await calls.answered('claimSubmissions', 1);
    const t = await w.queue.submit({ type: 'job' });
    await s.until(t.id);
    await w.worker.stop();
    expect(calls.wakesDropped).toBeGreaterThan(0); // the store did wake it, the wake-up was lost
    expect(w.errors).toEqual([]);
  });

  it('four workers of a queue sweep once per period between them, and a holder that died does not stop recovery', async () => {
    const first = await stores.open(kind);
    const handles: OpenedStore[] = [first];
    for (let i = 1; i < 4; i++) handles.push(await first.again());
    // deaf workers whose timers fire by hand: they claim nothing but what their sweeps give back
    const timers = handles.map(() => new ManualTimers());
    const counted = handles.map((h) => countingStore(h.store, { dropWakes: true }));
    const workers = counted.map(({ store }, i) => worker(store, () => undefined, { timers: timers[i], recoverEveryMs: 3000 }));
    await Promise.all(workers.map((w) => w.worker.start()));
    await Promise.all(counted.map((c) => c.calls.answered('claimSubmissions', 1))); // start-up rounds over
    const expired = async (n: number) => {
      const q = new PriorityQueue({ store: first.store, registry: workers[0].registry });
      for (let i = 0; i < n; i++) await q.submit({ type: 'job', payload: { i } });
      const claimed = await first.store.claimSubmissions({ owner: 'crashed', limit: n, leaseMs: 1 });
      expect(claimed.claimed).toHaveLength(n);
      const until = Math.max(...claimed.claimed.map((c) => c.leaseUntil!));
      while ((await first.store.now()) <= until) await sleep(2);
      return claimed.claimed.map((c) => c.id);
    };
    const sweeps = (c: (typeof counted)[number]) => (c.calls.by.get('sweepExpired') ?? 0) + (c.calls.by.get('recoverExpired') ?? 0);
    const sweepAll = async () => {
      const before = counted.map(sweeps);
      timers.forEach((t) => t.fire('recover'));
      await Promise.all(counted.map((c, i) => c.calls.answered('sweep', before[i] + 1)));
    };

    const lost = await expired(5);
    await sweepAll(); // every worker's sweep timer at the same moment
    const ran = counted.flatMap((c) => c.calls.sweepsRun);
    expect(ran.map((r) => r.length)).toEqual([lost.length]); // one sweep, three refused by its lease
    expect(ran[0].map((t) => t.task.id).sort()).toEqual([...lost].sort());
    expect(ran[0].map((t) => t.to)).toEqual(lost.map(() => TaskStatus.PENDING_SUBMIT));
    expect(counted.reduce((n, c) => n + c.calls.sweepsRefused, 0)).toBe(3);

    // within the lease's period (3 s) nobody sweeps again, whatever expires meanwhile
    const holder = counted.findIndex((c) => c.calls.sweepsRun.length === 1);
    await workers[holder].worker.stop(); // the holder dies: its lease is never given back
    const later = await expired(2);
    const left = counted.filter((_, i) => i !== holder);
    const leftTimers = timers.filter((_, i) => i !== holder);
    const refusedBefore = left.reduce((n, c) => n + c.calls.sweepsRefused, 0);
    for (;;) {
      const before = left.map(sweeps);
      leftTimers.forEach((t) => t.fire('recover'));
      await Promise.all(left.map((c, i) => c.calls.answered('sweep', before[i] + 1)));
      if (left.some((c) => c.calls.sweepsRun.length > 0)) break;
      await sleep(200);
    }
    // the lease lapsed, one of the others swept and recovered what expired
    const recovered = left.flatMap((c) => c.calls.sweepsRun).flat();
    expect(recovered.map((t) => t.task.id).sort()).toEqual([...later].sort());
    expect(recovered.map((t) => t.to)).toEqual(later.map(() => TaskStatus.PENDING_SUBMIT));
    expect(left.reduce((n, c) => n + c.calls.sweepsRefused, 0)).toBeGreaterThan(refusedBefore); // it was held meanwhile
    await Promise.all(workers.map((w, i) => (i === holder ? undefined : w.worker.stop())));
    expect(workers.flatMap((w) => w.errors)).toEqual([]);
  });
});

/**
 * A create's wake-up reaches every idle worker of the queue in every process. On Redis and
 * PostgreSQL it says so (WakeReason 'submissions'): each woken worker sends one claim, not a
 * claim and a poll claim (a create cannot make a poll claimable). Writes that can (a cancel of a
 * polled task, a limit change, a recovery) wake without a reason, and the poll claims still
 * follow them.
 */
describe.each(['redis', 'postgres'] as const)('Wake-ups of idle workers on %s', (kind) => {
  it("a create wakes with 'submissions'; a limit change wakes without a reason", async () => {
    const own = await stores.open(kind);
    const other = await own.again();
    const reasons: Array<string | undefined> = [];
    const off = await own.store.subscribe!((what) => reasons.push(what));
    const registry = new TaskTypeRegistry();
    registry.register('job', {}, { run: () => undefined }, 'IdleHandler');
    const producer = new PriorityQueue({ store: other.store, registry });
    const waitFor = async (n: number) => {
      while (reasons.length < n) await sleep(5);
    };
    await producer.submit({ type: 'job' });
    await waitFor(1);
    await other.store.setLimits({ kind: 'provider', providerKey: 'p', qps: 5 });
    await waitFor(2);
    await off();
    expect(reasons).toEqual(['submissions', undefined]);
  });

  it('a submit costs each idle worker of another client one claim and no poll claim', async () => {
    const first = await stores.open(kind);
    const handles: OpenedStore[] = [first];
    for (let i = 1; i < 4; i++) handles.push(await first.again());
    const s = startedSet();
    const counted = handles.map((h) => countingStore(h.store));
    const workers = counted.map(({ store }) => worker(store, s.started, { idlePollMs: 3_600_000, recoverEveryMs: 3_600_000 }));
    await Promise.all(workers.map((w) => w.worker.start()));
    await Promise.all(counted.map((c) => c.calls.answered('claimSubmissions', 1))); // start-up rounds over
    await sleep(600); // past the poll check of the start-up round (busyPollMs)
    const producerStore = (await first.again()).store;
    const producer = new PriorityQueue({ store: producerStore, registry: workers[0].registry });
    const count = (m: string) => counted.reduce((n, c) => n + (c.calls.by.get(m) ?? 0), 0);
    // quiet first: on a loaded machine a late start-up call (a listener's first connect wakes once)
    // must not count as the submit's
    for (let last = -1; last !== count('claimSubmissions') + count('claimPolls'); await sleep(300)) last = count('claimSubmissions') + count('claimPolls');
    const before = { claims: count('claimSubmissions'), polls: count('claimPolls') };
    const t = await producer.submit({ type: 'job' });
    await s.until(t.id);
    await Promise.all(workers.map((w) => w.worker.whenIdle()));
    await sleep(300); // every woken worker's round sent and answered
    await Promise.all(counted.map((c) => c.calls.answered('claimSubmissions', c.calls.by.get('claimSubmissions') ?? 0)));
    const claims = count('claimSubmissions') - before.claims;
    const polls = count('claimPolls') - before.polls;
    await Promise.all(workers.map((w) => w.worker.stop()));
    // the one whose handler ran claims polls when its slot frees (as a busy worker does every
    // busyPollMs); before, each of the four woken workers also claimed polls (five poll claims)
    expect(polls).toBeLessThanOrEqual(1);
    // one claim per woken worker, one more when the handler's slot freed
    expect(claims).toBeGreaterThanOrEqual(4);
    expect(claims).toBeLessThanOrEqual(5);
    expect(workers.flatMap((w) => w.errors)).toEqual([]);
  });

  it('a cancel of a polled task still reaches the idle worker that polls it, through the poll claim its wake-up sets off', async () => {
    const own = await stores.open(kind);
    const other = await own.again();
    const cancelled: string[] = [];
    const registry = new TaskTypeRegistry();
    registry.register(
      'job',
      { pollIntervalMs: 3_600_000 },
      {
        submit: () => ({ externalId: 'ext-1' }),
        poll: () => ({ done: false }),
        cancel: ({ externalId }) => void cancelled.push(externalId),
      },
      'PolledHandler',
    );
    const { store, calls } = countingStore(own.store);
    const w = new Worker({ store, registry, idlePollMs: 3_600_000, recoverEveryMs: 3_600_000 });
    await w.start();
    await calls.answered('claimSubmissions', 1);
    const producer = new PriorityQueue({ store: other.store, registry });
    const t = await producer.submit({ type: 'job' });
    while ((await other.store.get(t.id))?.status !== TaskStatus.SUBMITTED) await sleep(10);
    await sleep(600); // past the poll check of the rounds the submit set off: only the cancel's wake-up claims polls
    await producer.cancel(t.id);
    // without a poll claim the worker would not see the request before its safety poll (an hour)
    for (let i = 0; i < 2000 && (await other.store.get(t.id))?.status !== TaskStatus.CANCELED; i++) await sleep(10);
    await w.stop();
    expect((await other.store.get(t.id))?.status).toBe(TaskStatus.CANCELED);
    expect(cancelled).toEqual(['ext-1']);
  });
});
