import { FairTagOverflowError } from '../../../core/errors';
import type { CreateResult } from '../../../core/task-store.port';
import { newTaskRecord, type NewTask } from '../../../core/task';
import { TurnBatcher } from '../../shared/turn-batcher';
import type { StoreContext } from '../context';
import { toJson } from '../rows';
import { insertTasksPg } from './insert-tasks.pg';

/** Most tasks of single creates in one statement. */
const MAX_BATCH = 500;

/**
 * Most create statements of single creates out at once per store. A burst of unawaited
 * submit() calls after a quiet spell used to take one pooled connection each: node-pg closes
 * idle connections after 10 s, so each call met a new, cold one (a connect, then the insert's
 * first plan on its backend, 30-50 ms here), and the calls waiting on those made the pool open
 * more, up to its size (test/bench/profile/pg-quiet-burst.ts: 14-16 connections per burst, p99
 * 350-450 ms). With two out, the calls made meanwhile wait and go together in the next statement.
 */
const MAX_IN_FLIGHT = 2;

/**
 * create() on PostgreSQL for tasks without idempotency keys: one statement (insert-tasks.pg.ts).
 * The results as create() returns them, in the tasks' order.
 */
export async function createPg(c: StoreContext, tasks: readonly NewTask[]): Promise<CreateResult[]> {
  const payloads = tasks.map((t) => toJson(t.payload));
  const { inserted, now } = await insertTasksPg(c, tasks, payloads, tasks.some((t) => t.delayMs <= 0)); // NOTIFY when due
  return tasks.map((t, i) => {
    const p = payloads[i];
    const { seq, fairTag } = inserted.get(t.id)!;
    return { task: { ...newTaskRecord(t, now, seq, p === null ? null : JSON.parse(p)), fairTag }, created: true };
  });
}

/**
 * Single creates without an idempotency key on PostgreSQL (PriorityQueue.submit), gathered per
 * event-loop turn and, while MAX_IN_FLIGHT statements are out, until one is back
 * (shared/turn-batcher.ts): one statement for them all, each call its own result. The statement
 * is all or none, so a batch the server refused (an error response: the statement rolled back)
 * is sent again task by task, and the refusal reaches only its own call. Any other failure (a
 * lost connection: the insert may have committed) reaches every call of the batch as it is, and
 * nothing is sent again: a create is never written twice.
 */
export class PgCreateBatcher {
  private readonly batcher = new TurnBatcher<NewTask, CreateResult>({
    maxBatch: MAX_BATCH,
    maxInFlight: MAX_IN_FLIGHT,
    sendAtOnce: true,
    keyOf: (t) => t.id,
    send: (tasks) => createPg(this.c, tasks),
    // a refused statement rolled back (sent again alone); any other failure may have committed
    onFailure: { aloneIf: (e) => e instanceof FairTagOverflowError || this.c.d.nothingWritten(e) },
  });

  constructor(private readonly c: StoreContext) {}

  create(task: NewTask): Promise<CreateResult> {
    return this.batcher.add(task);
  }

  /** Sends what is gathered and waits for every statement out (close). */
  drain(): Promise<void> {
    return this.batcher.drain();
  }
}
