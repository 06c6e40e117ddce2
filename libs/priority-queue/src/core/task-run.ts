import { backoffDelay } from './backoff';
import { NotSubmittedError, PermanentError, PriorityQueueError, StaleLeaseError } from './errors';
import type { TaskEvents } from './events';
import type { PollResult, ResolvedTaskType, TaskHandler } from './handler';
import type { TaskTypeRegistry } from './registry';
import type { TaskStore } from './task-store.port';
import { fenceOf, TaskStatus, type Fence, type Task } from './task';

/** Waits before writing an outcome again after a store error (not a queue error such as a stale lease). */
const OUTCOME_RETRY_MS = [50, 250, 1000];

/** What a TaskRun needs from the worker that started it. */
export interface TaskRunContext {
  store: TaskStore;
  registry: TaskTypeRegistry;
  events: TaskEvents;
  owner: string;
  leaseMs: number;
  random: () => number;
  onError: (error: unknown) => void;
  /** A poll of this worker falls due in delayMs; returns delayMs. */
  pollScheduled: (delayMs: number) => number;
  /** The handler returned (or threw): only the outcome's write is left. Called at most once per run. */
  handlerDone?: (run: TaskRun) => void;
}

/**
 * One handler call on a claimed task (DESIGN §4): renews the lease while the handler runs,
 * aborts it when the lease is lost, and writes the outcome with the lease's fence — a submit
 * (one-shot run, or submit to a provider), a poll, or the finalisation of a cancel request.
 */
export class TaskRun {
  /** Set once the lease is known to be lost: nothing more is written. */
  lost = false;
  /**
   * Local time (Date.now()) of the claim or the last renewal sent; null while no renewal is due
   * (before execute() and once the outcome is being written). The worker renews for every run
   * through renewIfDue() on one timer instead of one timer per run.
   */
  renewedAt: number | null = null;
  private fence: Fence;
  private controller: AbortController | null = null;
  /** Why the run was aborted before anyone asked for its signal. */
  private abortReason: unknown = undefined;

  constructor(
    private readonly ctx: TaskRunContext,
    public task: Task,
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

  /** Runs the handler to its end; never rejects (errors go to ctx.onError). */
  async execute(kind: 'submit' | 'poll'): Promise<void> {
    this.renewedAt ??= Date.now();
    try {
      await (kind === 'submit' ? this.submit() : this.poll());
    } catch (e) {
      this.ctx.onError(e);
    } finally {
      this.renewedAt = null;
    }
  }

  /**
   * The worker stops: a submit goes back to the queue. `started`: the handler ran past the grace
   * period (it is aborted, and only an idempotent submit may go back, as a retry: an attempt is
   * counted); otherwise a prefetched submit that never started is released whether or not it is
   * idempotent (the provider never saw it): attempts, runAt and error unchanged, same place in
   * the order.
   */
  async handBack(started = true): Promise<void> {
    if (started) this.abortWith(new Error('worker shutting down'));
    this.renewedAt = null;
    if (this.lost || this.task.status !== TaskStatus.SUBMITTING || (started && !this.task.idempotent)) return;
    this.lost = true;
    const { store } = this.ctx;
    const op = started ? (f: Fence) => store.retry(f, { delayMs: 0, error: 'handed back: worker shut down' }) : (f: Fence) => store.release(f);
    await this.write(TaskStatus.SUBMITTING, op);
  }

  /**
   * Renews the lease when the last renewal is at least leaseMs/3 old (`now` is local time). A
   * refused renewal means another worker or the recovery owns the task: the handler is aborted.
   */
  renewIfDue(now: number): void {
    const { store, leaseMs } = this.ctx;
    if (this.lost || this.renewedAt === null || now - this.renewedAt < leaseMs / 3) return;
    this.renewedAt = now;
    store.renewLease(this.fence, leaseMs).then(
      (t) => {
        if (this.lost || this.renewedAt === null) return;
        this.task = t;
        this.fence = fenceOf(t);
      },
      (e) => {
        if (!(e instanceof StaleLeaseError)) return this.ctx.onError(e);
        this.lost = true;
        this.abortWith(e);
      },
    );
  }

  private abortWith(reason: unknown): void {
    if (this.controller) this.controller.abort(reason);
    else if (this.abortReason === undefined) this.abortReason = reason;
  }

  private handler(): { handler: TaskHandler; type: ResolvedTaskType } | null {
    const entry = this.ctx.registry.get(this.task.type);
    return entry?.handler ? { handler: entry.handler, type: entry.resolved } : null;
  }

  private async submit(): Promise<void> {
    const { store } = this.ctx;
    const found = this.handler();
    if (!found) {
      const error = `no handler for type "${this.task.type}" in worker ${this.ctx.owner}`;
      return this.write(TaskStatus.SUBMITTING, (f) => store.retry(f, { delayMs: 1000, error }));
    }
    const { handler, type } = found;
    const run = this;
    const hctx = { task: this.task, payload: this.task.payload, get signal() { return run.signal; } };
    try {
      if (handler.run) {
        const out = await handler.run(hctx);
        const result = out === undefined ? null : out;
        return await this.write(TaskStatus.SUBMITTING, (f) => store.complete(f, { status: TaskStatus.SUCCEEDED, result }));
      }
      const out = await handler.submit!(hctx);
      const externalId = typeof out === 'string' ? out : out?.externalId;
      if (typeof externalId !== 'string' || externalId === '') {
        throw new PermanentError(`submit() of "${this.task.type}" returned no external id`);
      }
      const pollDelayMs = this.ctx.pollScheduled(type.pollIntervalMs);
      await this.write(TaskStatus.SUBMITTING, (f) => store.markSubmitted(f, { externalId, status: TaskStatus.SUBMITTED, pollDelayMs }));
    } catch (error) {
      await this.submitFailed(type, error);
    }
  }

  /** DESIGN §4: retry with back-off, SUBMIT_UNKNOWN for a non-idempotent submit, FAILED at the end. */
  private async submitFailed(type: ResolvedTaskType, error: unknown): Promise<void> {
    if (this.lost) return;
    const { store } = this.ctx;
    const message = errorMessage(error);
    const task = this.task;
    const neverSeen = error instanceof NotSubmittedError;
    let status: TaskStatus.FAILED | TaskStatus.SUBMIT_UNKNOWN | null = null;
    if (error instanceof PermanentError) status = TaskStatus.FAILED;
    else if (!task.idempotent && !neverSeen) status = TaskStatus.SUBMIT_UNKNOWN;
    else if (task.attempts + 1 >= task.maxAttempts) status = TaskStatus.FAILED;
    if (status) {
      const s = status;
      return this.write(TaskStatus.SUBMITTING, (f) => store.complete(f, { status: s, error: message }));
    }
    const retryAfter = neverSeen ? (error as NotSubmittedError).retryAfterMs : undefined;
    const delayMs = retryAfter ?? backoffDelay(task.attempts + 1, type.backoffBaseMs, type.backoffMaxMs, this.ctx.random);
    await this.write(TaskStatus.SUBMITTING, (f) => store.retry(f, { delayMs, error: message }));
  }

  private async poll(): Promise<void> {
    const { store } = this.ctx;
    const task = this.task;
    const from = task.status;
    const waiting = from === TaskStatus.RUNNING ? TaskStatus.RUNNING : TaskStatus.SUBMITTED;
    const found = this.handler();
    const run = this;
    const pctx = { task, payload: task.payload, get signal() { return run.signal; }, externalId: task.externalId ?? '' };
    if (task.cancelRequested) {
      try {
        await found?.handler.cancel?.(pctx);
      } catch (e) {
        this.ctx.onError(e);
      }
      return this.write(from, (f) => store.complete(f, { status: TaskStatus.CANCELED, error: 'canceled' }));
    }
    if (!found?.handler.poll) {
      const error = `no poll handler for type "${task.type}" in worker ${this.ctx.owner}`;
      return this.write(from, (f) => store.recordPoll(f, { status: waiting, nextPollDelayMs: 1000, pollErrors: task.pollErrors, error }));
    }
    const type = found.type;
    let result: PollResult;
    try {
      result = await found.handler.poll(pctx);
    } catch (error) {
      if (error instanceof PermanentError) {
        return this.write(from, (f) => store.complete(f, { status: TaskStatus.FAILED, error: errorMessage(error) }));
      }
      const pollErrors = task.pollErrors + 1;
      const nextPollDelayMs = this.ctx.pollScheduled(backoffDelay(pollErrors, type.pollIntervalMs, type.maxPollIntervalMs, this.ctx.random));
      return this.write(from, (f) => store.recordPoll(f, { status: waiting, nextPollDelayMs, pollErrors, error: errorMessage(error) }));
    }
    if (!result.done) {
      const nextPollDelayMs = this.ctx.pollScheduled(Math.max(0, result.nextPollMs ?? type.pollIntervalMs));
      await this.write(from, (f) => store.recordPoll(f, { status: TaskStatus.RUNNING, nextPollDelayMs, pollErrors: 0, error: null }));
    } else if ('failed' in result) {
      const error = result.failed;
      await this.write(from, (f) => store.complete(f, { status: TaskStatus.FAILED, error }));
    } else {
      const value = result.result === undefined ? null : result.result;
      await this.write(from, (f) => store.complete(f, { status: TaskStatus.SUCCEEDED, result: value }));
    }
  }

  /**
   * A fenced write. A stale fence whose lease is still ours means only the version moved (a
   * cancel request arrived while the handler ran): re-fence once and write, so the outcome (e.g.
   * the external id) is kept and the cancel is then honoured. Otherwise another worker or the
   * recovery owns the task now, and the write is dropped. Any other store failure (not a
   * PriorityQueueError) is retried after 50, 250 and 1000 ms, within leaseMs / 3 in all; then it
   * goes to onError and the lease's expiry hands the task to recovery.
   */
  private async write(from: TaskStatus, op: (fence: Fence) => Promise<Task>): Promise<void> {
    this.renewedAt = null;
    this.ctx.handlerDone?.(this);
    let refenced = false;
    let waited = 0;
    for (let failure = 0; ; ) {
      try {
        const t = await op(this.fence);
        if (t.status !== from) this.ctx.events.emit(t, from);
        return;
      } catch (e) {
        if (e instanceof StaleLeaseError) {
          if (refenced || this.lost) return;
          refenced = true;
          const current = await this.ctx.store.get(this.task.id).catch(() => null);
          if (!current || current.leaseId !== this.fence.leaseId || current.status !== from) return;
          this.task = current;
          this.fence = fenceOf(current);
          continue;
        }
        // Not the queue's own verdict (a dropped connection, a deadlock past the store's own
        // retries): the outcome is written again a few times rather than lost, which would run
        // the task again once its lease expired. The lease was renewed at most leaseMs / 3 ago
        // when the handler returned, so waits within leaseMs / 3 in all keep it ours.
        const delay = OUTCOME_RETRY_MS[failure++];
        if (e instanceof PriorityQueueError || delay === undefined || this.lost || waited + delay > this.ctx.leaseMs / 3) return this.ctx.onError(e);
        waited += delay;
        await new Promise((resolve) => setTimeout(resolve, delay));
      }
    }
  }
}

function errorMessage(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}
