import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { backoffDelay } from './backoff';
import { NotSubmittedError, PermanentError, StaleLeaseError } from './errors';
import { TaskEvents } from './events';
import type { PollResult, ResolvedTaskType, TaskHandler } from './handler';
import type { TaskTypeRegistry } from './registry';
import type { TaskStore } from './task-store.port';
import { fenceOf, TaskStatus, type Fence, type Task } from './task';
import { NodeTimerHost, type TimerHost } from './timers';

export interface WorkerOptions {
  store: TaskStore;
  registry: TaskTypeRegistry;
  events?: TaskEvents;
  /** Lease owner name; default host:pid:random. */
  owner?: string;
  /** Most handler calls (submits + polls) at once. Default 16. */
  concurrency?: number;
  /** Most claims per store call. Default = concurrency. */
  batchSize?: number;
  /**
   * While handlers run, a finished handler triggers a new claim only once this many slots are
   * free, so a store with costly round trips claims in batches; timers (idlePollMs, due times)
   * always claim. Default max(1, floor(batchSize / 4)).
   */
  minBatch?: number;
  /** Lease length; renewed every leaseMs/3 while a handler runs. Default 30 s. */
  leaseMs?: number;
  /** Fallback poll when idle; store.subscribe() wakes the worker earlier. Default 250 ms. */
  idlePollMs?: number;
  /** Period of the recoverExpired sweep. Default 1 s. */
  recoverEveryMs?: number;
  /** How long stop() waits for running handlers. Default 10 s. */
  shutdownGraceMs?: number;
  /** Unique name of this worker's timers in the timer host. Default `priority-queue:<owner>`. */
  name?: string;
  timers?: TimerHost;
  random?: () => number;
  /** Called with errors the loop survives (store unreachable, a listener failing...). */
  onError?: (error: unknown) => void;
}

interface ActiveRun {
  task: Task;
  fence: Fence;
  abort: AbortController;
  renew: NodeJS.Timeout | null;
  lost: boolean;
  done: Promise<void>;
}

/**
 * The worker loop (DESIGN §4): claims batches, runs handlers with bounded concurrency, renews
 * leases, retries with back-off, polls provider tasks, recovers expired leases, stops gracefully.
 * Framework-free; the Nest orchestrator creates one per process and hands it a TimerHost.
 */
export class Worker {
  readonly owner: string;
  private readonly store: TaskStore;
  private readonly registry: TaskTypeRegistry;
  private readonly events: TaskEvents;
  private readonly concurrency: number;
  private readonly batchSize: number;
  private readonly minBatch: number;
  private readonly leaseMs: number;
  private readonly idlePollMs: number;
  private readonly recoverEveryMs: number;
  private readonly graceMs: number;
  private readonly name: string;
  private readonly timers: TimerHost;
  private readonly random: () => number;
  private readonly onError: (error: unknown) => void;

  private readonly active = new Map<string, ActiveRun>();
  private started = false;
  private stopping = false;
  private roundRunning = false;
  private roundAgain = false;
  private wakeScheduled = false;
  private hardWake = false;
  /**
   * Local time before which a soft wake skips claimPolls: polls fall due on timers, not on every
   * finished handler, so a busy worker saves one round trip per claim.
   */
  private nextPollCheck = 0;
  private unsubscribe: (() => Promise<void>) | null = null;
  /** storeNow - Date.now(), refreshed at each sweep, to turn store times into local delays. */
  private clockOffset = 0;
  private recovering = false;

  constructor(options: WorkerOptions) {
    this.store = options.store;
    this.registry = options.registry;
    this.events = options.events ?? new TaskEvents();
    this.owner = options.owner ?? `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
    this.concurrency = positiveInt(options.concurrency, 16, 'concurrency');
    this.batchSize = positiveInt(options.batchSize, this.concurrency, 'batchSize');
    this.minBatch = Math.min(this.batchSize, positiveInt(options.minBatch, Math.max(1, Math.floor(this.batchSize / 4)), 'minBatch'));
    this.leaseMs = positiveInt(options.leaseMs, 30_000, 'leaseMs');
    this.idlePollMs = positiveInt(options.idlePollMs, 250, 'idlePollMs');
    this.recoverEveryMs = positiveInt(options.recoverEveryMs, 1000, 'recoverEveryMs');
    this.graceMs = options.shutdownGraceMs ?? 10_000;
    this.name = options.name ?? `priority-queue:${this.owner}`;
    this.timers = options.timers ?? new NodeTimerHost();
    this.random = options.random ?? Math.random;
    this.onError = options.onError ?? (() => undefined);
  }

  /** Handler calls in progress. */
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
    this.timers.addInterval(`${this.name}:poll`, () => this.wake(true), this.idlePollMs);
    this.timers.addInterval(`${this.name}:recover`, () => void this.sweep(), this.recoverEveryMs);
    if (this.store.subscribe) {
      this.unsubscribe = await this.store.subscribe(() => this.wake(false));
    }
    this.wake(true);
  }

  /**
   * Asks for a claim round soon; calls coalesce. A soft wake (hard = false) claims only when the
   * worker is idle or at least minBatch slots are free.
   */
  wake(hard = true): void {
    if (this.stopping) return;
    this.hardWake ||= hard;
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
    if (this.stopping) return 0;
    let free = this.concurrency - this.active.size;
    if (free <= 0 || (!force && this.active.size > 0 && free < this.minBatch)) return 0;
    let dispatched = 0;
    if (force || Date.now() >= this.nextPollCheck) {
      const limit = Math.min(free, this.batchSize);
      const polls = await this.store.claimPolls({ owner: this.owner, limit, leaseMs: this.leaseMs });
      for (const t of polls) this.dispatch(t, 'poll');
      dispatched += polls.length;
      free -= polls.length;
      if (polls.length < limit) this.nextPollCheck = Date.now() + this.idlePollMs;
    }
    if (free > 0 && !this.stopping) {
      const claim = await this.store.claimSubmissions({ owner: this.owner, limit: Math.min(free, this.batchSize), leaseMs: this.leaseMs });
      for (const t of claim.timedOut) this.events.emit(t, TaskStatus.PENDING_SUBMIT);
      for (const t of claim.claimed) {
        this.events.emit(t, TaskStatus.PENDING_SUBMIT);
        this.dispatch(t, 'submit');
      }
      dispatched += claim.claimed.length;
      if (claim.nextWakeAt !== null && this.started) {
        const delay = Math.max(0, claim.nextWakeAt - (Date.now() + this.clockOffset));
        if (delay < this.idlePollMs) this.timers.addTimeout(`${this.name}:due`, () => this.wake(true), delay + 1);
      }
    }
    return dispatched;
  }

  /** Runs recoverExpired once (also on a timer after start()). */
  async sweep(): Promise<number> {
    if (this.recovering || this.stopping) return 0;
    this.recovering = true;
    try {
      await this.syncClock();
      const transitions = await this.store.recoverExpired(1000);
      this.events.emitTransitions(transitions);
      if (transitions.length) this.wake();
      return transitions.length;
    } catch (e) {
      this.onError(e);
      return 0;
    } finally {
      this.recovering = false;
    }
  }

  /** Resolves when no handler call is in progress. */
  async whenIdle(): Promise<void> {
    while (this.active.size > 0) await Promise.all([...this.active.values()].map((r) => r.done));
  }

  /**
   * Graceful shutdown: stop claiming, let running handlers finish within the grace period,
   * then abort the rest and hand idempotent submits back to the queue.
   */
  async stop(): Promise<void> {
    if (this.stopping) return;
    this.stopping = true;
    for (const suffix of ['poll', 'recover', 'due', 'poll-due']) this.timers.remove(`${this.name}:${suffix}`);
    const unsub = this.unsubscribe;
    this.unsubscribe = null;
    if (unsub) await unsub().catch((e) => this.onError(e));
    while (this.roundRunning || this.recovering) await new Promise((r) => setTimeout(r, 5));
    let graceTimer: NodeJS.Timeout | undefined;
    await Promise.race([
      this.whenIdle(),
      new Promise<void>((r) => (graceTimer = setTimeout(r, this.graceMs))),
    ]);
    clearTimeout(graceTimer);
    const left = [...this.active.values()];
    for (const run of left) {
      run.abort.abort(new Error('worker shutting down'));
      this.clearRenew(run);
    }
    await Promise.all(
      left.map(async (run) => {
        if (run.lost || run.task.status !== TaskStatus.SUBMITTING || !run.task.idempotent) return;
        run.lost = true;
        await this.write(run, TaskStatus.SUBMITTING, () => this.store.retry(run.fence, { delayMs: 0, error: 'handed back: worker shut down' }));
      }),
    );
  }

  private async round(): Promise<void> {
    if (this.roundRunning) {
      this.roundAgain = true;
      return;
    }
    this.roundRunning = true;
    try {
      do {
        this.roundAgain = false;
        const force = this.hardWake;
        this.hardWake = false;
        let n: number;
        do {
          n = await this.tick(force);
        } while (n > 0 && this.active.size < this.concurrency && !this.stopping);
      } while (this.roundAgain && !this.stopping);
    } catch (e) {
      this.onError(e);
    } finally {
      this.roundRunning = false;
    }
  }

  private async syncClock(): Promise<void> {
    try {
      const before = Date.now();
      const storeNow = await this.store.now();
      this.clockOffset = storeNow - Math.round((before + Date.now()) / 2);
    } catch (e) {
      this.onError(e);
    }
  }

  private dispatch(task: Task, kind: 'submit' | 'poll'): void {
    const run: ActiveRun = {
      task,
      fence: fenceOf(task),
      abort: new AbortController(),
      renew: null,
      lost: false,
      done: Promise.resolve(),
    };
    this.active.set(task.id, run);
    this.scheduleRenew(run);
    run.done = (kind === 'submit' ? this.runSubmit(run) : this.runPoll(run))
      .catch((e) => this.onError(e))
      .finally(() => {
        this.clearRenew(run);
        this.active.delete(task.id);
        this.wake(false);
      });
  }

  private scheduleRenew(run: ActiveRun): void {
    const every = Math.max(1, Math.floor(this.leaseMs / 3));
    run.renew = setInterval(() => {
      if (run.lost) return;
      this.store.renewLease(run.fence, this.leaseMs).then(
        (t) => {
          if (!run.lost) {
            run.task = t;
            run.fence = fenceOf(t);
          }
        },
        (e) => {
          if (e instanceof StaleLeaseError) {
            run.lost = true;
            run.abort.abort(e);
          } else this.onError(e);
        },
      );
    }, every);
  }

  private clearRenew(run: ActiveRun): void {
    if (run.renew) clearInterval(run.renew);
    run.renew = null;
  }

  private handlerOf(task: Task): { handler: TaskHandler; type: ResolvedTaskType } | null {
    const entry = this.registry.get(task.type);
    return entry?.handler ? { handler: entry.handler, type: entry.resolved } : null;
  }

  private async runSubmit(run: ActiveRun): Promise<void> {
    const found = this.handlerOf(run.task);
    if (!found) {
      await this.write(run, TaskStatus.SUBMITTING, () =>
        this.store.retry(run.fence, { delayMs: 1000, error: `no handler for type "${run.task.type}" in worker ${this.owner}` }),
      );
      return;
    }
    const { handler, type } = found;
    const ctx = { task: run.task, payload: run.task.payload, signal: run.abort.signal };
    try {
      if (handler.run) {
        const result = await handler.run(ctx);
        await this.write(run, TaskStatus.SUBMITTING, () =>
          this.store.complete(run.fence, { status: TaskStatus.SUCCEEDED, result: result === undefined ? null : result }),
        );
      } else {
        const out = await handler.submit!(ctx);
        const externalId = typeof out === 'string' ? out : out?.externalId;
        if (typeof externalId !== 'string' || externalId === '') {
          throw new PermanentError(`submit() of "${run.task.type}" returned no external id`);
        }
        await this.write(run, TaskStatus.SUBMITTING, () =>
          this.store.markSubmitted(run.fence, { externalId, status: TaskStatus.SUBMITTED, pollDelayMs: this.pollSoon(type.pollIntervalMs) }),
        );
      }
    } catch (error) {
      await this.submitFailed(run, type, error);
    }
  }

  private async submitFailed(run: ActiveRun, type: ResolvedTaskType, error: unknown): Promise<void> {
    if (run.lost) return;
    const message = errorMessage(error);
    const task = run.task;
    const neverSeen = error instanceof NotSubmittedError;
    if (error instanceof PermanentError) {
      await this.write(run, TaskStatus.SUBMITTING, () => this.store.complete(run.fence, { status: TaskStatus.FAILED, error: message }));
    } else if (!task.idempotent && !neverSeen) {
      await this.write(run, TaskStatus.SUBMITTING, () =>
        this.store.complete(run.fence, { status: TaskStatus.SUBMIT_UNKNOWN, error: message }),
      );
    } else if (task.attempts + 1 >= task.maxAttempts) {
      await this.write(run, TaskStatus.SUBMITTING, () => this.store.complete(run.fence, { status: TaskStatus.FAILED, error: message }));
    } else {
      const retryAfter = neverSeen ? (error as NotSubmittedError).retryAfterMs : undefined;
      const delayMs = retryAfter ?? backoffDelay(task.attempts + 1, type.backoffBaseMs, type.backoffMaxMs, this.random);
      await this.write(run, TaskStatus.SUBMITTING, () => this.store.retry(run.fence, { delayMs, error: message }));
    }
  }

  private async runPoll(run: ActiveRun): Promise<void> {
    const task = run.task;
    const from = task.status;
    const found = this.handlerOf(task);
    const ctx = { task, payload: task.payload, signal: run.abort.signal, externalId: task.externalId ?? '' };
    if (task.cancelRequested) {
      if (found?.handler.cancel) {
        try {
          await found.handler.cancel(ctx);
        } catch (e) {
          this.onError(e);
        }
      }
      await this.write(run, from, () => this.store.complete(run.fence, { status: TaskStatus.CANCELED, error: 'canceled' }));
      return;
    }
    if (!found?.handler.poll) {
      await this.write(run, from, () =>
        this.store.recordPoll(run.fence, {
          status: from === TaskStatus.RUNNING ? TaskStatus.RUNNING : TaskStatus.SUBMITTED,
          nextPollDelayMs: 1000,
          pollErrors: task.pollErrors,
          error: `no poll handler for type "${task.type}" in worker ${this.owner}`,
        }),
      );
      return;
    }
    const type = found.type;
    let result: PollResult;
    try {
      result = await found.handler.poll(ctx);
    } catch (error) {
      if (error instanceof PermanentError) {
        await this.write(run, from, () => this.store.complete(run.fence, { status: TaskStatus.FAILED, error: errorMessage(error) }));
        return;
      }
      const pollErrors = task.pollErrors + 1;
      const delay = backoffDelay(pollErrors, type.pollIntervalMs, type.maxPollIntervalMs, this.random);
      await this.write(run, from, () =>
        this.store.recordPoll(run.fence, {
          status: from === TaskStatus.RUNNING ? TaskStatus.RUNNING : TaskStatus.SUBMITTED,
          nextPollDelayMs: this.pollSoon(delay),
          pollErrors,
          error: errorMessage(error),
        }),
      );
      return;
    }
    if (!result.done) {
      const next = result.nextPollMs ?? type.pollIntervalMs;
      await this.write(run, from, () =>
        this.store.recordPoll(run.fence, { status: TaskStatus.RUNNING, nextPollDelayMs: this.pollSoon(Math.max(0, next)), pollErrors: 0, error: null }),
      );
    } else if ('failed' in result) {
      await this.write(run, from, () => this.store.complete(run.fence, { status: TaskStatus.FAILED, error: result.failed }));
    } else {
      const value = result.result === undefined ? null : result.result;
      await this.write(run, from, () => this.store.complete(run.fence, { status: TaskStatus.SUCCEEDED, result: value }));
    }
  }

  /** Notes that a poll of ours falls due in delayMs, so a soft wake checks polls by then. */
  private pollSoon(delayMs: number): number {
    this.nextPollCheck = Math.min(this.nextPollCheck, Date.now() + delayMs);
    if (this.started && delayMs < this.idlePollMs) this.timers.addTimeout(`${this.name}:poll-due`, () => this.wake(true), delayMs + 1);
    return delayMs;
  }

  /**
   * A fenced write. A stale fence whose lease is still ours means only the version moved (a
   * cancel request arrived while the handler ran): re-fence once and write, so the outcome (e.g.
   * the external id) is kept and the cancel is then honoured. Otherwise another worker or the
   * recovery owns the task now, and the write is dropped.
   */
  private async write(run: ActiveRun, from: TaskStatus, op: () => Promise<Task>): Promise<void> {
    this.clearRenew(run);
    for (let attempt = 0; ; attempt++) {
      try {
        const t = await op();
        if (t.status !== from) this.events.emit(t, from);
        return;
      } catch (e) {
        if (!(e instanceof StaleLeaseError)) return this.onError(e);
        if (attempt > 0 || run.lost) return;
        const current = await this.store.get(run.task.id).catch(() => null);
        if (!current || current.leaseId !== run.fence.leaseId || current.status !== from) return;
        run.task = current;
        run.fence = fenceOf(current);
      }
    }
  }
}

function errorMessage(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

function positiveInt(v: number | undefined, dflt: number, name: string): number {
  if (v === undefined) return dflt;
  if (!Number.isInteger(v) || v < 1) throw new RangeError(`Worker option ${name} must be an integer >= 1, got ${String(v)}`);
  return v;
}
