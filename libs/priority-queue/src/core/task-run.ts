// Above ~400 lines on purpose: one task's lease from claim to outcome. The handler's submit and
// poll, the deadline watch, lease renewal and the fenced outcome write with its re-fences all read
// and move one fence and one abort state; split, every part would pass that state around.
import { backoffDelay } from './backoff';
import { MAX_TIMER_MS, monotonicNow } from './timers';
import { DeadlinePassedError, LeaseExpiredError, NotSubmittedError, PermanentError, PriorityQueueError, StaleLeaseError, TaskNotFoundError } from './errors';
import type { TaskEvents } from './events';
import type { PollResult, ResolvedTaskType, TaskHandler } from './handler';
import { delayOf, errorText, externalIdOf, pollResultOf, resultOf } from './handler-output';
import { cancelAtProvider } from './provider-cancel';
import type { TaskTypeRegistry } from './registry';
import { ruleFor } from './removal';
import type { CompletionOutcome, TaskStore } from './task-store.port';
import { fenceOf, TaskStatus, type Fence, type Task } from './task';

/**
 * Waits before writing an outcome again after a store error (not a queue error such as a stale
 * lease); the last one repeats for as long as the lease lasts (write()).
 */
const OUTCOME_RETRY_MS = [50, 250, 1000];
/** Re-fences of one fenced call: each needs another change of the version under our lease. */
const MAX_REFENCES = 3;
/** Longest setTimeout (a longer delay fires at once): a later deadline re-arms when it fires. */
/** The error a task ended TIMED_OUT by its holder records (as the stores' recovery does). */
const DEADLINE_ERROR = 'deadline passed';

/** What a TaskRun needs from the worker that started it. */
export interface TaskRunContext {
  store: TaskStore;
  /** store.complete, or the worker's gathering of completes for store.completeAndClaim (complete-gatherer.ts). */
  complete: TaskStore['complete'];
  registry: TaskTypeRegistry;
  events: TaskEvents;
  owner: string;
  leaseMs: number;
  random: () => number;
  onError: (error: unknown) => void;
  /** The store clock now, as the worker estimates it (local time + its clock offset). */
  storeNow: () => number;
  /** A poll of this worker falls due in delayMs; returns delayMs. */
  pollScheduled: (delayMs: number) => number;
  /** The handler returned (or threw): only the outcome's write is left. Called at most once per run. */
  handlerDone?: (run: TaskRun) => void;
  /** Told of handler errors and lost leases (for logs); never changes what the run does. */
  observer?: WorkerObserver;
}

/** What a worker reports besides transitions (which go to TaskEvents): for logs and metrics. */
export interface WorkerObserver {
  /** A handler threw (submit / run, or poll); the transition that follows, if any, is an event. */
  handlerFailed?(task: Task, error: unknown, phase: 'submit' | 'poll'): void;
  /** This worker lost a task's lease (another worker or the recovery owns it now): the handler was aborted or its outcome dropped. */
  leaseLost?(task: Task): void;
}

/**
 * One handler call on a claimed task (DESIGN §4): renews the lease while the handler runs,
 * aborts it when the lease is lost or the task's deadline passes, and writes the outcome with
 * the lease's fence: a submit (one-shot run, or submit to a provider), a poll, the
 * finalisation of a cancel request, or TIMED_OUT at the deadline.
 *
 * Fencing: a renewal or a write refused with StaleLeaseError goes through one rule, refence():
 * while the lease id is still ours, the task in the status we hold it in and the lease not
 * expired, only the version moved (a cancel request, or a command re-sent after a lost reply
 * that had already run), so the run adopts the current version and goes on; otherwise another
 * worker or the recovery owns the task, and the run gives up (aborts, writes nothing).
 */
export class TaskRun {
  /** Set once the lease is known to be lost: nothing more is written. */
  lost = false;
  /**
   * Local time (monotonicNow()) of the claim or the last renewal sent; null while no renewal is due
   * (before execute() and once an outcome is being written). The worker renews for every run
   * through renewIfDue() on one timer instead of one timer per run.
   */
  renewedAt: number | null = null;
  private fence: Fence;
  private controller: AbortController | null = null;
  /**
   * Local time (monotonicNow()) until which the lease is surely ours: leaseMs after the claim or the
   * last successful renewal was SENT (the store started the lease later, so this is never past
   * its real end in local time, whatever the clocks' offset). Set by the worker at dispatch.
   */
  leaseKeptUntil = Infinity;
  /** The lease came within a renewal tick of leaseKeptUntil without a renewal: the handler was aborted. */
  private expiring = false;
  /** Why the run was aborted before anyone asked for its signal. */
  private abortReason: unknown = undefined;
  /** An outcome is being written (the handler's, the deadline's or a hand-back's): no other one is. */
  private settled = false;
  /** The handler was called (a deadline then ends a failed submit attempt). */
  private handlerStarted = false;
  /** The deadline's TIMED_OUT write succeeded: a late submit's external id is cancelled at the provider. */
  private timedOut = false;
  private deadlineTimer: NodeJS.Timeout | null = null;
  /** The deadline's write and provider cancel while in progress; execute() ends after it. */
  private deadlineWork: Promise<void> | null = null;

  constructor(
    private readonly ctx: TaskRunContext,
    public task: Task,
    readonly kind: 'submit' | 'poll',
  ) {
    this.fence = fenceOf(task);
  }

  /** The handler's abort signal, made on first use: most handlers never read it. */
  get signal(): AbortSignal {
    if (!this.controller) {
      this.controller = new AbortController();
      if (this.abortReason !== undefined) this.controller.abort(this.abortReason);
    }
    return this.controller.signal;
  }

  /**
   * Arms the deadline (DESIGN §4): at deadlineAt (store clock) the handler is aborted and the
   * task ends TIMED_OUT. The worker calls it once it holds the task (a prefetched task's
   * deadline runs while it waits for a slot).
   */
  watchDeadline(): void {
    const at = this.task.deadlineAt;
    if (at === null || this.settled || this.lost) return;
    const left = at - this.ctx.storeNow();
    if (left <= 0) return this.deadlinePassed();
    this.deadlineTimer = setTimeout(() => {
      this.deadlineTimer = null;
      this.watchDeadline();
    }, Math.min(left, MAX_TIMER_MS));
  }

  /** Runs the handler to its end; never rejects (errors go to ctx.onError). */
  async execute(): Promise<void> {
    try {
      if (this.settled || this.lost) return; // timed out (or lost) while it waited for a slot
      if (this.expiring) return await this.handBack(false); // its lease ran out while it waited: not started
      this.renewedAt ??= monotonicNow();
      await (this.kind === 'submit' ? this.submit() : this.poll());
    } catch (e) {
      this.ctx.onError(e);
    } finally {
      this.renewedAt = null;
      this.stopDeadline();
      if (this.deadlineWork) await this.deadlineWork;
    }
  }

  /**
   * The worker stops: a submit goes back to the queue. `started`: the handler ran past the grace
   * period (it is aborted, and only an idempotent submit may go back, as a retry: an attempt is
   * counted); otherwise a prefetched submit that never started is released whether or not it is
   * idempotent (the provider never saw it): attempts, runAt and error unchanged, same place in
   * the order. Nothing happens when an outcome is already being written.
   */
  async handBack(started = true): Promise<void> {
    if (started) this.abortWith(new Error('worker shutting down'));
    this.renewedAt = null;
    this.stopDeadline();
    if (this.settled || this.lost || this.task.status !== TaskStatus.SUBMITTING || (started && !this.task.idempotent)) return;
    this.settled = true;
    const { store } = this.ctx;
    const op = started ? (f: Fence) => store.retry(f, { delayMs: 0, error: 'handed back: worker shut down' }) : (f: Fence) => store.release(f);
    await this.write(op);
  }

  /**
   * Renews the lease when the last renewal is at least leaseMs/4 old (`now` is local time), so at
   * every second tick of the worker's leaseMs/6 timer: a threshold between two ticks, which the
   * timer's jitter (a tick a fraction of a millisecond early) cannot move to the third. A
   * refusal goes through refence(); the handler is aborted only when the lease is not ours any
   * more. A store error is reported, and the next renewal tries again; but once the lease as last
   * renewed is within leaseMs/6 (the worker's renewal tick) of its end, the handler is aborted
   * (LeaseExpiredError): from its end the recovery may give the task to another worker, and a
   * handler that went on would then run beside that one, holding its limits' slots twice. Its
   * outcome is still written under the fence (the store keeps it if nobody took the task).
   */
  renewIfDue(now: number): void {
    if (this.lost || this.renewedAt === null) return;
    this.abortIfExpiring(now);
    if (!this.renewalDue(this.renewedAt, now)) return;
    this.renewedAt = now;
    this.renew().then(
      (t) => {
        if (this.lost || this.renewedAt === null) return; // an outcome's write fences itself
        if (t) this.adoptRenewal(t, now);
        else {
          this.lost = true;
          this.abortWith(new StaleLeaseError(this.task.id));
        }
      },
      (e) => {
        if (!this.lost && this.renewedAt !== null) this.ctx.onError(e);
      },
    );
  }

  private abortIfExpiring(now: number): void {
    if (this.expiring || this.leaseLastsAt(now)) return;
    this.expiring = true;
    this.abortWith(new LeaseExpiredError(this.task.id, Math.round(this.leaseKeptUntil - monotonicNow()) + this.ctx.storeNow())); // its end, on the store's clock
  }

  private abortWith(reason: unknown): void {
    if (this.controller) this.controller.abort(reason);
    else if (this.abortReason === undefined) this.abortReason = reason;
  }

  private stopDeadline(): void {
    if (this.deadlineTimer) clearTimeout(this.deadlineTimer);
    this.deadlineTimer = null;
  }

  private handler(): { handler: TaskHandler; type: ResolvedTaskType } | null {
    const entry = this.ctx.registry.get(this.task.type);
    return entry?.handler ? { handler: entry.handler, type: entry.resolved } : null;
  }

  private async submit(): Promise<unknown> {
    const { store } = this.ctx;
    const found = this.handler();
    if (!found) {
      const error = `no handler for type "${this.task.type}" in worker ${this.ctx.owner}`;
      return this.finish((f) => store.retry(f, { delayMs: 1000, error }));
    }
    const { handler, type } = found;
    const run = this;
    const hctx = { task: this.task, payload: this.task.payload, get signal() { return run.signal; } };
    this.handlerStarted = true;
    try {
      if (handler.run) {
        const result = resultOf(await handler.run(hctx), type.type, 'run');
        return await this.finish(this.completion({ status: TaskStatus.SUCCEEDED, result }));
      }
      const externalId = externalIdOf(await handler.submit!(hctx), type.type);
      if (this.settled) return await this.lateExternalId(externalId);
      const pollDelayMs = this.ctx.pollScheduled(type.pollIntervalMs);
      await this.finish((f) => store.markSubmitted(f, { externalId, status: TaskStatus.SUBMITTED, pollDelayMs }));
    } catch (error) {
      this.ctx.observer?.handlerFailed?.(this.task, error, 'submit');
      await this.submitFailed(type, error);
    }
  }

  /**
   * DESIGN §4: retry with back-off, SUBMIT_UNKNOWN for a non-idempotent submit, FAILED at the
   * end. Each is a failed attempt: a terminal outcome counts it in its complete().
   */
  private async submitFailed(type: ResolvedTaskType, error: unknown): Promise<unknown> {
    if (this.lost || this.settled) return;
    const { store } = this.ctx;
    const message = errorText(error);
    const task = this.task;
    const neverSeen = error instanceof NotSubmittedError;
    let status: TaskStatus.FAILED | TaskStatus.SUBMIT_UNKNOWN | null = null;
    if (error instanceof PermanentError) status = TaskStatus.FAILED;
    else if (!task.idempotent && !neverSeen) status = TaskStatus.SUBMIT_UNKNOWN;
    else if (task.attempts + 1 >= task.maxAttempts) status = TaskStatus.FAILED;
    if (status) {
      const s = status;
      return this.finish(this.completion({ status: s, error: message, attempt: true }));
    }
    const backoff = () => backoffDelay(task.attempts + 1, type.backoffBaseMs, type.backoffMaxMs, this.ctx.random);
    const delayMs = neverSeen ? delayOf((error as NotSubmittedError).retryAfterMs, backoff()) : backoff();
    await this.finish((f) => store.retry(f, { delayMs, error: message }));
  }

  private async poll(): Promise<unknown> {
    const { store } = this.ctx;
    const task = this.task;
    const waiting = task.status === TaskStatus.RUNNING ? TaskStatus.RUNNING : TaskStatus.SUBMITTED;
    const found = this.handler();
    const run = this;
    const pctx = { task, payload: task.payload, get signal() { return run.signal; }, externalId: task.externalId ?? '' };
    if (task.cancelRequested) {
      await cancelAtProvider(this.ctx.registry, task, task.externalId, this.ctx.onError, this.signal);
      return this.finish(this.completion({ status: TaskStatus.CANCELED, error: 'canceled' }));
    }
    if (!found?.handler.poll) {
      const error = `no poll handler for type "${task.type}" in worker ${this.ctx.owner}`;
      return this.finish((f) => store.recordPoll(f, { status: waiting, nextPollDelayMs: 1000, pollErrors: task.pollErrors, error }));
    }
    const type = found.type;
    let result: PollResult;
    this.handlerStarted = true;
    try {
      result = pollResultOf(await found.handler.poll(pctx), type.type);
    } catch (error) {
      this.ctx.observer?.handlerFailed?.(task, error, 'poll');
      if (error instanceof PermanentError) {
        return this.finish(this.completion({ status: TaskStatus.FAILED, error: errorText(error) }));
      }
      const pollErrors = task.pollErrors + 1;
      const nextPollDelayMs = this.ctx.pollScheduled(backoffDelay(pollErrors, type.pollIntervalMs, type.maxPollIntervalMs, this.ctx.random));
      return this.finish((f) => store.recordPoll(f, { status: waiting, nextPollDelayMs, pollErrors, error: errorText(error) }));
    }
    if (!result.done) {
      const nextPollDelayMs = this.ctx.pollScheduled(delayOf(result.nextPollMs, type.pollIntervalMs));
      await this.finish((f) => store.recordPoll(f, { status: TaskStatus.RUNNING, nextPollDelayMs, pollErrors: 0, error: null }));
    } else if ('failed' in result) {
      const error = errorText(result.failed);
      await this.finish(this.completion({ status: TaskStatus.FAILED, error }));
    } else {
      let value: unknown;
      try {
        value = resultOf(result.result, type.type, 'poll');
      } catch (e) {
        return this.finish(this.completion({ status: TaskStatus.FAILED, error: errorText(e) }));
      }
      await this.finish(this.completion({ status: TaskStatus.SUCCEEDED, result: value }));
    }
  }

  /**
   * The deadline passed while this worker holds the task (DESIGN §4): the handler is aborted,
   * the task ends TIMED_OUT by a fenced write (a failed attempt when submit() was running), and
   * a job the provider accepted is cancelled through the handler's cancel hook, once: only
   * after our write made the transition (a task timed out between polls is the recovery
   * sweep's, see Worker.sweep). A late result of the handler is discarded.
   */
  private deadlinePassed(): void {
    if (this.settled || this.lost) return;
    this.settled = true;
    this.renewedAt = null;
    this.stopDeadline();
    const reason = new DeadlinePassedError(this.task.id, this.task.deadlineAt!);
    this.abortWith(reason);
    const attempt = this.kind === 'submit' && this.handlerStarted;
    const { registry, onError } = this.ctx;
    this.deadlineWork = (async () => {
      const t = await this.write(this.completion({ status: TaskStatus.TIMED_OUT, error: DEADLINE_ERROR, attempt }));
      if (t?.status !== TaskStatus.TIMED_OUT) return;
      this.timedOut = true;
      if (this.kind === 'poll') await cancelAtProvider(registry, t, t.externalId, onError);
    })().catch(onError);
  }

  /** The provider accepted a submit after its deadline: the task is TIMED_OUT, the job is not wanted. */
  private async lateExternalId(externalId: string): Promise<void> {
    await this.deadlineWork;
    if (this.timedOut) await cancelAtProvider(this.ctx.registry, this.task, externalId, this.ctx.onError);
  }

  /**
   * The handler's outcome: written unless another outcome already is (the deadline passed, or
   * the worker handed the task back). Frees the worker's handler slot at once.
   */
  /** A complete() of this task, with the removal rule of its type for that status (core/removal.ts). */
  private completion(outcome: CompletionOutcome): (fence: Fence) => Promise<Task> {
    const remove = ruleFor(this.ctx.registry.removal(this.task.type), outcome.status);
    if (remove === null) return (f) => this.ctx.complete(f, outcome);
    const o = { ...outcome, remove };
    return async (f) => {
      try {
        return await this.ctx.complete(f, o);
      } catch (e) {
        // Nobody else deletes a task under our lease: not found means this very complete ran and
        // deleted it, and its reply was lost (a client re-sent it, or the write was retried). The
        // task as written is rebuilt here for the event (finishedAt: the store clock as the worker
        // estimates it), so events and waitFor still see the end.
        if (!(e instanceof TaskNotFoundError)) throw e;
        const at = this.ctx.storeNow();
        return {
          ...this.task,
          status: outcome.status,
          result: outcome.result === undefined ? null : outcome.result,
          error: outcome.error ?? null,
          attempts: this.task.attempts + (outcome.attempt ? 1 : 0),
          finishedAt: at,
          updatedAt: at,
          version: f.version + 1,
          leaseOwner: null,
          leaseId: null,
          leaseUntil: null,
          nextPollAt: null,
        };
      }
    };
  }

  private finish(op: (fence: Fence) => Promise<Task>): Promise<unknown> {
    if (this.settled) return Promise.resolve();
    this.settled = true;
    this.renewedAt = null;
    this.ctx.handlerDone?.(this);
    return this.write(op, true);
  }

  /**
   * A fenced write of an outcome; emits its transition. A refusal goes through afterRefusal();
   * a lease that is not ours any more drops the write. Any other store failure (not a
   * PriorityQueueError: a dropped connection, a server restarting, a deadlock past the store's
   * own retries) is retried after 50, 250 and 1000 ms, then every 1000 ms. An outcome (`keep`)
   * is retried for up to one lease, the lease renewed between the tries: an outage shorter than
   * that loses nothing (else the task would run again, or end SUBMIT_UNKNOWN, once its lease
   * expired), and a store that keeps refusing the write (but not the renewals) holds the task
   * for one lease more at most. Anything else (a hand-back at stop(), TIMED_OUT at the deadline)
   * is retried within leaseMs / 3, without renewals. When the time is up, or the lease would run
   * out before the next try, the error goes to onError and the lease's expiry hands the task to
   * recovery. Returns the task as written, or null when nothing was written.
   */
  private async write(op: (fence: Fence) => Promise<Task>, keep = false): Promise<Task | null> {
    const from = this.task.status;
    // without renewals the lease lasts leaseMs from the last one, renewed at most leaseMs / 3
    // before the handler returned: tries within leaseMs / 3 keep it ours
    const giveUpAt = monotonicNow() + (keep ? this.ctx.leaseMs : this.ctx.leaseMs / 3);
    for (let failure = 0, refences = 0; ; ) {
      try {
        const t = await op(this.fence);
        if (t.status !== from) this.ctx.events.emit(t, from);
        return t;
      } catch (e) {
        const next = await this.afterRefusal(e, refences++);
        if (next === 'again') continue;
        if (next === 'lost') return null;
        const delay = OUTCOME_RETRY_MS[Math.min(failure++, OUTCOME_RETRY_MS.length - 1)];
        if (e instanceof PriorityQueueError || this.lost || monotonicNow() + delay > giveUpAt) {
          this.ctx.onError(e);
          return null;
        }
        await new Promise((resolve) => setTimeout(resolve, delay));
        if (keep) await this.renewBetweenWrites();
        if (!this.leaseLastsAt(monotonicNow())) {
          this.ctx.onError(e);
          return null;
        }
      }
    }
  }

  /**
   * The lease surely lasts past local time `now` by a renewal tick (leaseMs / 6): the margin by
   * which the abort rule stops a handler (abortIfExpiring), and within which a write is tried.
   */
  private leaseLastsAt(now: number): boolean {
    return now < this.leaseKeptUntil - this.ctx.leaseMs / 6;
  }

  /** A renewal is due when the last one (or the claim) was sent at least leaseMs / 4 before `now`. */
  private renewalDue(lastSentAt: number, now: number): boolean {
    return now - lastSentAt >= this.ctx.leaseMs / 4;
  }

  /** A renewal sent at local time `sentAt` answered with `t`: the run holds the lease as renewed. */
  private adoptRenewal(t: Task, sentAt: number): void {
    this.task = t;
    this.fence = fenceOf(t);
    this.leaseKeptUntil = Math.max(this.leaseKeptUntil, sentAt + this.ctx.leaseMs);
  }

  /**
   * Between two tries of an outcome's write (write()), the lease is renewed as the worker renews
   * it while the handler runs (its last renewal is leaseMs / 4 old): one call at a time with the
   * write, so the two never race. A refusal or an error changes nothing here: the next try of
   * the write meets the same store and goes through the write's own rules (afterRefusal).
   */
  private async renewBetweenWrites(): Promise<void> {
    const { store, leaseMs } = this.ctx;
    const sent = monotonicNow();
    if (this.lost || !this.renewalDue(this.leaseKeptUntil - leaseMs, sent)) return; // leaseKeptUntil - leaseMs: when the last renewal kept was sent
    try {
      this.adoptRenewal(await store.renewLease(this.fence, leaseMs), sent);
    } catch {
      // the store is still out, or the lease moved: the write's next try tells which
    }
  }

  /** A lease renewal under the re-fence rule: the task as renewed, or null once the lease is not ours. */
  private async renew(): Promise<Task | null> {
    const { store, leaseMs } = this.ctx;
    for (let refences = 0; ; refences++) {
      try {
        return await store.renewLease(this.fence, leaseMs);
      } catch (e) {
        const next = await this.afterRefusal(e, refences);
        if (next === 'again') continue;
        if (next === 'lost') return null;
        throw e;
      }
    }
  }

  /**
   * The re-fence rule of every fenced call (renewals and writes), after it failed with `e`:
   * 'again' when it was refused with StaleLeaseError while refence() finds the lease still ours
   * (send it again with the current fence), 'lost' when the lease is not ours any more (nothing
   * written), 'error' for any other failure (and a refusal after MAX_REFENCES moves of the
   * version).
   */
  private async afterRefusal(e: unknown, refences: number): Promise<'again' | 'lost' | 'error'> {
    if (!(e instanceof StaleLeaseError) || refences >= MAX_REFENCES) return 'error';
    if (this.lost) return 'lost';
    if (await this.refence()) return 'again';
    this.ctx.observer?.leaseLost?.(this.task);
    return 'lost';
  }

  /**
   * DESIGN §4: after a refusal, the lease is still ours when the task, read again, has our lease
   * id, the status we hold it in, and a lease that has not expired (store clock): only the
   * version moved. Then the run adopts the current task and fence and returns true.
   */
  private async refence(): Promise<boolean> {
    const current = await this.ctx.store.get(this.task.id).catch(() => null);
    if (!current || current.leaseId !== this.fence.leaseId || current.status !== this.task.status) return false;
    if (current.leaseUntil === null || current.leaseUntil <= this.ctx.storeNow()) return false;
    this.task = current;
    this.fence = fenceOf(current);
    return true;
  }
}
