// Over ~400 lines on purpose: the worker's loop is one state machine (slots, prefetch queue,
// claims, wakes, the clock offset, lease renewal, stop); a task's own run is in task-run.ts and
// its settings in worker-options.ts.
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { StoreUnavailableError } from './errors';
import { TaskEvents } from './events';
import { Messages } from './messages';
import type { TaskTypeRegistry } from './registry';
import { CompleteGatherer } from './complete-gatherer';
import { Sweeper } from './sweeper';
import { TaskRun, type TaskRunContext } from './task-run';
import type { SubmissionClaim, TaskStore } from './task-store.port';
import { TaskStatus, type Task } from './task';
import { monotonicNow, NodeTimerHost, settledWithin, SHUTDOWN_WAIT_MS, type TimerHost } from './timers';
import { CLOCK_RESYNC_MS, workerSettings, type WorkerOptions } from './worker-options';

export type { WorkerOptions } from './worker-options';

/** What a claim tick dispatched, and whether a claim of it was answered in full. */
interface Claimed {
  n: number;
  full: boolean;
  /**
   * The free slots read right after the tick's last claim was dispatched, before any handler it
   * started can have returned (-1: the tick sent no claim). Slots that free later (a handler
   * that returns in a few microtasks) claim through the wake-up of their release, in the next
   * turn: read after an await instead, the count depends on how many microtasks the handlers
   * take (an async handler: claims of 32 instead of 48 at concurrency 16 + prefetch 32).
   */
  freeAfter: number;
}
const NONE: Claimed = { n: 0, full: false, freeAfter: -1 };

/** `b`'s freeAfter when it sent a claim (it ran after `a`), else `a`'s. */
function lastFreeAfter(a: Claimed, b: Claimed): number {
  return b.freeAfter >= 0 ? b.freeAfter : a.freeAfter;
}

interface ActiveRun {
  run: TaskRun;
  /** Resolves when the run is over (outcome written, or handed back). */
  done: Promise<void>;
  finished: () => void;
}

/**
 * Whether the Worker sends a turn's completes with its next claim (store.completeAndClaim): only
 * where the claim would otherwise wait for them, a store that runs one call at a time (Redis,
 * SQLite: one round trip and one server step instead of two in a row). Where calls run side by
 * side (a connection pool; memory, no I/O: store.parallelCalls) the claim goes beside the
 * completes instead: combined, it would wait for them (PostgreSQL / MariaDB drain at
 * concurrency 16 lost a third) and save nothing.
 */
export function completesRideOnClaims(store: TaskStore): boolean {
  return store.completeAndClaim !== undefined && store.parallelCalls !== true;
}

/**
 * The worker loop (DESIGN §4): claims batches, runs handlers with bounded concurrency, renews
 * leases, enforces deadlines, retries with back-off, polls provider tasks, recovers expired
 * leases, stops gracefully.
 * Framework-free; the Nest orchestrator creates one per process and hands it a TimerHost.
 */
export class Worker {
  readonly owner: string;
  private readonly store: TaskStore;
  private readonly registry: TaskTypeRegistry;
  private readonly events: TaskEvents;
  private readonly concurrency: number;
  private readonly batchSize: number;
  private readonly prefetch: number;
  private readonly claimsInFlight: number;
  private readonly minBatch: number;
  private readonly leaseMs: number;
  private readonly idlePollMs: number;
  /** Claim rounds while runs are active, and the cadence of the poll checks of soft wakes. */
  private readonly busyPollMs: number;
  private readonly recoverEveryMs: number;
  private readonly graceMs: number;
  private readonly name: string;
  private readonly timers: TimerHost;
  private readonly random: () => number;
  private readonly onError: (error: unknown) => void;

  /** Every run not finished yet, its outcome's write included. */
  private readonly active = new Map<string, ActiveRun>();
  /**
   * Runs whose handler has not returned yet: these hold the concurrency slots. A run whose
   * handler returned frees its slot while its outcome is written, so the next claim overlaps
   * that write (at most `concurrency` writes in flight).
   */
  private readonly busy = new Set<TaskRun>();
  /** Prefetched runs waiting for a slot, in claim order (also in `active`, not in `busy`). */
  private readonly queued: ActiveRun[] = [];
  private started = false;
  private stopping = false;
  /** Claim rounds running (at most claimsInFlight). */
  private rounds = 0;
  /** Slots asked for by claim calls still in flight. */
  private reserved = 0;
  private roundAgain = false;
  /**
   * The last claim was answered short: nothing more was claimable. A returning handler changes
   * nothing in the store, so its slot claims only when this is false (the run's end always wakes).
   */
  private storeDry = false;
  private wakeScheduled = false;
  private hardWake = false;
  /**
   * A wake-up since the last round started may have made polls claimable (anything but a
   * store's 'submissions' wake-up): only then does a soft round claim polls.
   */
  private pollWake = false;
  /**
   * Local time before which a soft wake skips claimPolls: polls fall due on timers, not on every
   * finished handler, so a busy worker saves one round trip per claim.
   */
  private nextPollCheck = 0;
  /** Local time of the last claim round that claimed polls (the safety poll counts from it). */
  private lastPollRound = -Infinity;
  private unsubscribe: (() => Promise<void>) | null = null;
  /**
   * The store clock minus local time, read before the first claim, then at least every minute (at a
   * sweep), to turn store times into local delays (deadlines, due times) and to tell whether a lease
   * expired. Local time is monotonicNow() here, never the wall clock: see core/timers.ts. Until
   * the first read answers, the wall clock stands in for the store's.
   */
  private clockOffset = Date.now() - monotonicNow();
  private clockSynced = false;
  /** Local time of the last clock read. */
  private clockSyncedAt = -Infinity;
  private readonly sweeper: Sweeper;
  /** One timer renews the leases of all running handlers; it exists while runs are active. */
  private renewTimer: NodeJS.Timeout | null = null;
  private readonly runContext: TaskRunContext;
  /**
   * The completes of a turn, sent with that turn's claim (complete-gatherer.ts) where that pays:
   * see completesRideOnClaims. Null otherwise (complete() and claimSubmissions() apart).
   */
  private readonly outcomes: CompleteGatherer | null;

  constructor(options: WorkerOptions) {
    this.store = options.store;
    this.registry = options.registry;
    this.events = options.events ?? new TaskEvents();
    this.owner = options.owner ?? `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
    const o = workerSettings(options);
    this.concurrency = o.concurrency;
    this.prefetch = o.prefetch;
    this.claimsInFlight = o.claimsInFlight;
    this.batchSize = o.batchSize;
    this.minBatch = o.minBatch;
    this.leaseMs = o.leaseMs;
    this.idlePollMs = o.idlePollMs;
    this.busyPollMs = o.busyPollMs;
    this.recoverEveryMs = o.recoverEveryMs;
    this.graceMs = o.graceMs;
    this.name = options.name ?? `priority-queue:${this.owner}`;
    this.timers = options.timers ?? new NodeTimerHost();
    this.random = options.random ?? Math.random;
    this.onError = options.onError ?? (() => undefined);
    this.sweeper = new Sweeper({
      store: this.store,
      registry: this.registry,
      events: this.events,
      owner: this.owner,
      periodMs: this.recoverEveryMs,
      onError: this.onError,
      syncClock: (always) => (always || monotonicNow() - this.clockSyncedAt >= CLOCK_RESYNC_MS ? this.syncClock() : Promise.resolve()),
      changed: () => this.wake(),
    });
    const store = this.store;
    this.outcomes = completesRideOnClaims(store)
      ? new CompleteGatherer(store as ConstructorParameters<typeof CompleteGatherer>[0], () => this.rounds > 0 || this.wakeScheduled)
      : null;
    const outcomes = this.outcomes;
    this.runContext = {
      store: this.store,
      complete: outcomes ? (f, o) => outcomes.complete(f, o) : (f, o) => store.complete(f, o),
      registry: this.registry,
      events: this.events,
      owner: this.owner,
      leaseMs: this.leaseMs,
      random: this.random,
      onError: this.onError,
      storeNow: () => Math.round(monotonicNow() + this.clockOffset), // whole ms, as store times are
      pollScheduled: (ms) => this.pollScheduled(ms),
      handlerDone: (run) => this.release(run),
      observer: options.observer,
    };
  }

  /** Tasks this worker holds: handlers running, prefetched tasks waiting, outcomes being written. */
  get running(): number {
    return this.active.size;
  }

  get isStarted(): boolean {
    return this.started && !this.stopping;
  }

  async start(): Promise<void> {
    if (this.started) return;
    this.started = true;
    await this.syncClock();
    this.timers.addInterval(`${this.name}:poll`, () => this.pollTimer(), this.busyPollMs);
    this.timers.addInterval(`${this.name}:recover`, () => void this.sweeper.run(true), this.recoverEveryMs);
    if (this.store.subscribe) {
      this.unsubscribe = await this.store.subscribe((what) => this.wake(false, what !== 'submissions'));
    }
    this.wake(true);
  }

  /**
   * Asks for a claim round soon; calls coalesce. A soft wake (hard = false) claims only when the
   * worker is idle or at least minBatch slots are free. polls = false: this wake-up cannot have
   * made a poll claimable (a create elsewhere), so it alone does not make a soft round claim polls.
   */
  wake(hard = true, polls = true): void {
    if (this.stopping) return;
    this.hardWake ||= hard;
    this.pollWake ||= polls;
    if (this.wakeScheduled) return;
    this.wakeScheduled = true;
    setImmediate(() => {
      this.wakeScheduled = false;
      void this.round();
    });
  }

  /**
   * One claim round: polls due, then submissions, dispatched to handlers. Returns the number
   * of tasks dispatched. Tests drive the worker with tick() + whenIdle() instead of start().
   */
  async tick(force = true): Promise<number> {
    return (await this.claimTick(force, true)).n;
  }

  /**
   * tick(), and whether a claim was answered in full: only then may more be claimable now (a
   * round claims again); later work comes with a wake-up (a submit, a freed slot, a due time).
   */
  private async claimTick(force: boolean, polls: boolean): Promise<Claimed> {
    if (this.stopping) return NONE;
    if (!this.clockSynced) await this.syncClock();
    const free = this.freeSlots();
    if (free <= 0 || (!force && this.busy.size > 0 && free < this.minBatch)) {
      this.storeDry = false; // a wake-up with no slot to claim for: the next freed slot claims
      return NONE;
    }
    // a timer's round claims polls first (they are due); a wake-up's round claims submissions
    // first (what it announces, most often: the new task starts one round trip sooner)
    if (force) {
      const polls = await this.claimPollsNow(true);
      const subs = await this.claimSubmissionsNow(polls.cap);
      return { n: polls.n + subs.n, full: polls.full || subs.full, freeAfter: lastFreeAfter(polls, subs) };
    }
    const subs = await this.claimSubmissionsNow();
    if (!polls) return subs;
    const polled = await this.claimPollsNow(false);
    return { n: subs.n + polled.n, full: subs.full || polled.full, freeAfter: lastFreeAfter(subs, polled) };
  }

  /**
   * claimPolls for the handler slots free now (polls are never prefetched); a soft round only
   * every busyPollMs. `cap`: the free slots read right after the polls were dispatched (or now,
   * when none were claimed), so that a poll handler that ends at once does not hand its slot to
   * this round's submissions.
   */
  private async claimPollsNow(force: boolean): Promise<Claimed & { cap: number }> {
    const pollSlots = Math.min(this.freeSlots(), this.concurrency - this.busy.size - this.queued.length);
    if (pollSlots <= 0 || this.stopping || (!force && monotonicNow() < this.nextPollCheck)) return { ...NONE, cap: this.freeSlots() };
    this.lastPollRound = monotonicNow();
    const limit = Math.min(pollSlots, this.batchSize);
    this.reserved += limit;
    let polls: Task[];
    const sentAt = monotonicNow();
    try {
      polls = await this.store.claimPolls({ owner: this.owner, limit, leaseMs: this.leaseMs });
    } finally {
      this.reserved -= limit;
    }
    for (const t of polls) this.dispatch(t, 'poll', sentAt);
    if (polls.length < limit) this.nextPollCheck = monotonicNow() + this.busyPollMs;
    const freeAfter = this.freeSlots();
    return { n: polls.length, full: polls.length >= limit, freeAfter, cap: freeAfter };
  }

  /**
   * claimSubmissions for every free slot (prefetch included), with the completes of this turn
   * when the store has completeAndClaim; arms the due timer from nextWakeAt.
   */
  private async claimSubmissionsNow(cap = Infinity): Promise<Claimed> {
    const free = Math.min(cap, this.freeSlots()); // other claims may have reserved slots meanwhile
    if (free <= 0 || this.stopping) return NONE;
    const limit = Math.min(free, this.batchSize);
    this.reserved += limit;
    let claim: SubmissionClaim;
    const sentAt = monotonicNow();
    try {
      const request = { owner: this.owner, limit, leaseMs: this.leaseMs };
      // completes written this turn ride on the claim (store.completeAndClaim): one round trip
      claim = this.outcomes && this.outcomes.size > 0 ? await this.outcomes.withClaim(request) : await this.store.claimSubmissions(request);
    } finally {
      this.reserved -= limit;
    }
    for (const b of claim.boosted ?? []) this.events.emitBoost(b.task, b.fromPriority);
    for (const t of claim.timedOut) this.events.emit(t, TaskStatus.PENDING_SUBMIT);
    for (const t of claim.claimed) {
      this.events.emit(t, TaskStatus.PENDING_SUBMIT);
      this.dispatch(t, 'submit', sentAt);
    }
    const freeAfter = this.freeSlots();
    if (claim.nextWakeAt !== null && this.started) {
      const delay = Math.max(0, claim.nextWakeAt - (monotonicNow() + this.clockOffset));
      if (delay < this.idlePollMs) this.timers.addTimeout(`${this.name}:due`, () => this.wake(true), delay + 1);
    }
    // timed-out candidates do not count toward the limit: the next claim may find more
    const full = claim.claimed.length >= limit || claim.timedOut.length > 0;
    this.storeDry = !full;
    return { n: claim.claimed.length, full, freeAfter };
  }

  /**
   * Runs recoverExpired once, now, after reading the store clock (the timer of start() sweeps
   * through the store's sweep lease instead); calls the provider's cancel hook of the tasks it
   * times out between polls. Returns the number of transitions.
   */
  async sweep(): Promise<number> {
    if (this.stopping) return 0;
    return this.sweeper.run(false);
  }

  /** Resolves when no handler call (cancel hooks of the sweep included) is in progress. */
  async whenIdle(): Promise<void> {
    while (this.active.size > 0 || this.sweeper.pendingCancels > 0) {
      await Promise.all([...[...this.active.values()].map((r) => r.done), this.sweeper.cancelsIdle()]);
    }
  }

  /**
   * Graceful shutdown: stop claiming, let running handlers finish within the grace period,
   * then abort the rest and hand idempotent submits back to the queue.
   */
  async stop(): Promise<void> {
    if (this.stopping) return;
    this.stopping = true;
    for (const suffix of ['poll', 'recover', 'due', 'poll-due']) this.timers.remove(`${this.name}:${suffix}`);
    // A store that does not answer (a partition: requests hang, nothing fails) must not hold the
    // shutdown: what waits on it is given up at the deadline, and leases that were not handed
    // back expire and go to the recovery, as after a crash. Nothing is lost.
    const writesMs = Math.min(SHUTDOWN_WAIT_MS, this.leaseMs); // past the lease a hand-back is the recovery's anyway
    const deadline = monotonicNow() + this.graceMs + writesMs;
    let gaveUp = false;
    const bounded = async (work: Promise<unknown>): Promise<void> => {
      if (!(await settledWithin(work, deadline - monotonicNow()))) gaveUp = true;
    };
    const unsub = this.unsubscribe;
    this.unsubscribe = null;
    if (unsub) await bounded(unsub().catch((e) => this.onError(e)));
    await bounded(
      (async () => {
        while (this.rounds > 0 || this.sweeper.busy) await new Promise((r) => setTimeout(r, 5));
      })(),
    );
    // prefetched tasks that did not start go back to the queue at once
    await bounded(
      Promise.all(
        this.queued.splice(0).map(async (entry) => {
          await entry.run.handBack(false).catch((e) => this.onError(e));
          this.active.delete(entry.run.task.id);
          entry.finished();
        }),
      ),
    );
    let graceTimer: NodeJS.Timeout | undefined;
    await Promise.race([
      this.whenIdle(),
      new Promise<void>((r) => (graceTimer = setTimeout(r, Math.max(0, Math.min(this.graceMs, deadline - writesMs - monotonicNow()))))),
    ]);
    clearTimeout(graceTimer);
    await bounded(Promise.all([...this.active.values()].map(({ run }) => run.handBack().catch((e) => this.onError(e)))));
    this.stopRenewals();
    if (gaveUp) this.onError(new StoreUnavailableError(Messages.stopGaveUp(this.owner, this.graceMs + writesMs, this.active.size)));
  }

  private async round(): Promise<void> {
    if (this.rounds >= this.claimsInFlight) {
      this.roundAgain = true;
      return;
    }
    this.rounds++;
    this.roundAgain = false;
    try {
      let force = this.hardWake;
      const polls = this.pollWake;
      this.hardWake = false;
      this.pollWake = false;
      let got: Claimed;
      do {
        got = await this.claimTick(force, polls);
        force = false; // a hard wake forces one tick (polls included), the rest claim as soft wakes
        // again at once only for slots still free right after the dispatch (see Claimed.freeAfter)
      } while (got.n > 0 && got.full && got.freeAfter > 0 && !this.stopping);
    } catch (e) {
      this.onError(e);
    } finally {
      this.rounds--;
    }
    // A wake-up that came while this round ran (a slot freed, a submit): its round runs from the
    // next turn, as any wake-up's does, once the handlers this round started and that return
    // within the turn have freed their slots (and, where completes ride on claims, gathered them).
    if (this.roundAgain) {
      this.roundAgain = false;
      this.wake(false, false); // the wake-ups that asked for it have set pollWake as they need
    }
    // completes this round left (it claimed nothing, or they came after its claim) and no round
    // to come: written now (CompleteGatherer's claimComing)
    if (this.rounds === 0 && !this.wakeScheduled) this.outcomes?.flush();
  }

  /**
   * The poll timer (every busyPollMs): a claim round while runs are active (slots that freed
   * are filled), else only when the last round that claimed polls is idlePollMs old (the
   * safety poll).
   */
  private pollTimer(): void {
    if (this.active.size > 0 || monotonicNow() - this.lastPollRound >= this.idlePollMs - this.busyPollMs / 2) this.wake(true);
  }

  private async syncClock(): Promise<void> {
    try {
      const before = monotonicNow();
      const storeNow = await this.store.now();
      this.clockOffset = storeNow - Math.round((before + monotonicNow()) / 2);
      this.clockSynced = true;
      this.clockSyncedAt = monotonicNow();
    } catch (e) {
      this.onError(e);
    }
  }

  /** Holds a claimed task: `claimSentAt`, local time (monotonicNow) the claim was sent (its lease began later). */
  private dispatch(task: Task, kind: 'submit' | 'poll', claimSentAt: number): void {
    const run = new TaskRun(this.runContext, task, kind);
    let finished!: () => void;
    const done = new Promise<void>((r) => (finished = r));
    const entry: ActiveRun = { run, done, finished };
    this.active.set(task.id, entry);
    run.renewedAt = monotonicNow(); // leased from now on: renewed while it waits and while it runs
    run.leaseKeptUntil = claimSentAt + this.leaseMs;
    run.renewIfDue(monotonicNow()); // a claim whose reply came too late to keep its lease: the run hands it back, never starts
    run.watchDeadline();
    // every leaseMs/6: each run renews at every second tick (TaskRun.renewIfDue), its last renewal about leaseMs/3 old
    if (!this.renewTimer) {
      this.renewTimer = setInterval(() => this.renewLeases(), Math.max(1, Math.floor(this.leaseMs / 6)));
      this.renewTimer.unref(); // running handlers keep the process alive, not their renewals
    }
    if (this.busy.size < this.concurrency && this.queued.length === 0) this.startRun(entry);
    else this.queued.push(entry);
  }

  private startRun(entry: ActiveRun): void {
    const { run } = entry;
    this.busy.add(run);
    void run.execute().finally(() => {
      this.active.delete(run.task.id);
      this.busy.delete(run);
      if (this.active.size === 0) this.stopRenewals();
      entry.finished();
      this.startQueued();
      this.wake(false);
    });
  }

  private startQueued(): void {
    while (this.busy.size < this.concurrency && this.queued.length > 0 && !this.stopping) this.startRun(this.queued.shift()!);
  }

  /**
   * Slots for a claim: handler slots plus the prefetch buffer, minus what runs or waits; none
   * while 2 x (concurrency + prefetch) outcome writes are still in flight (back-pressure on a
   * slow store; below that, the next claim overlaps the writes).
   */
  private freeSlots(): number {
    const capacity = this.concurrency + this.prefetch;
    const waiting = this.busy.size + this.queued.length;
    if (this.active.size - waiting >= 2 * capacity) return 0;
    return capacity - waiting - this.reserved;
  }

  private release(run: TaskRun): void {
    if (!this.busy.delete(run)) return;
    this.startQueued();
    if (!this.storeDry) this.wake(false);
  }

  private renewLeases(): void {
    const now = monotonicNow();
    for (const { run } of this.active.values()) run.renewIfDue(now);
  }

  private stopRenewals(): void {
    if (this.renewTimer) clearInterval(this.renewTimer);
    this.renewTimer = null;
  }

  /** Notes that a poll of ours falls due in delayMs, so a soft wake checks polls by then. */
  private pollScheduled(delayMs: number): number {
    this.nextPollCheck = Math.min(this.nextPollCheck, monotonicNow() + delayMs);
    if (this.started && delayMs < this.idlePollMs) this.timers.addTimeout(`${this.name}:poll-due`, () => this.wake(true), delayMs + 1);
    return delayMs;
  }
}
