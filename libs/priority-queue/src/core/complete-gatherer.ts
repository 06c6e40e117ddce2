import type { Fence, Task } from './task';
import type { ClaimRequest, CompleteCall, CompletionOutcome, SubmissionClaim, TaskStore } from './task-store.port';

interface Waiting {
  call: CompleteCall;
  resolve(task: Task): void;
  reject(error: unknown): void;
}

/**
 * The worker's complete() calls of one event-loop turn, for a store with completeAndClaim: a
 * claim round that starts in the same turn (a finished handler wakes one, and the wake runs
 * first) takes them and sends them with its claim in one round trip; what no claim takes is
 * sent at the turn's end through complete(), as without this. Each call settles with its own
 * answer, so a TaskRun's fenced write (re-fence, retry after a lost reply) is the same either way.
 * `claimComing`: a claim round runs or is scheduled (it may first claim polls, a round trip): the
 * turn's end leaves the completes to it, and the worker calls flush() when a round ends with
 * none coming.
 */
export class CompleteGatherer {
  private waiting: Waiting[] = [];
  private turn: NodeJS.Immediate | null = null;

  constructor(
    private readonly store: TaskStore & Required<Pick<TaskStore, 'completeAndClaim'>>,
    private readonly claimComing: () => boolean = () => false,
  ) {}

  /** A complete() that rides on this turn's claim, if one comes. */
  complete(fence: Fence, outcome: CompletionOutcome): Promise<Task> {
    return new Promise<Task>((resolve, reject) => {
      this.waiting.push({ call: { fence, outcome }, resolve, reject });
      this.turn ??= setImmediate(() => {
        this.turn = null;
        if (!this.claimComing()) this.flush();
      });
    });
  }

  /** Completes waiting for a claim. */
  get size(): number {
    return this.waiting.length;
  }

  /**
   * The waiting completes, then `request`, in one completeAndClaim; settles every complete with
   * its answer. A call that fails as a whole rejects every complete with its error (each
   * TaskRun decides whether to write again) and rejects.
   */
  async withClaim(request: ClaimRequest): Promise<SubmissionClaim> {
    const batch = this.take();
    let reply;
    try {
      reply = await this.store.completeAndClaim(
        batch.map((w) => w.call),
        request,
      );
    } catch (e) {
      for (const w of batch) w.reject(e);
      throw e;
    }
    reply.completed.forEach((a, i) => (a.error ? batch[i].reject(a.error) : batch[i].resolve(a.task)));
    return reply.claim;
  }

  /** No claim takes them: each goes through complete() (the store batches them itself). */
  flush(): void {
    for (const w of this.take()) this.store.complete(w.call.fence, w.call.outcome).then(w.resolve, w.reject);
  }

  private take(): Waiting[] {
    if (this.turn) clearImmediate(this.turn);
    this.turn = null;
    const batch = this.waiting;
    this.waiting = [];
    return batch;
  }
}
