import { InvalidStateError, TaskNotFoundError } from '../../../core/errors';
import { Messages } from '../../../core/messages';
import { isRetryable, RETRYABLE_STATUSES } from '../../../core/requeue';
import { TaskStatus, type Transition } from '../../../core/task';
import { q, run, type StoreContext } from '../context';
import { orderColumns } from '../order-columns';
import { fairTagOf, num, rowToTask, TASK_COLUMNS } from '../rows';
import { byId } from './by-id';
import { notifyArgs } from './limits';
import { keyColumn, keyOf } from './row-key';
import { list, raw, sql } from './sql';
import { markStaged } from './stage-marks';

/**
 * requeue (TaskManager.retry): a FAILED, TIMED_OUT, CANCELED or SUBMIT_UNKNOWN task back to
 * PENDING_SUBMIT as a fresh attempt (core/requeue.ts). The task is staged, like a retried or
 * re-prioritised one, so the next claim merges it into its lane with its new key (runAt = now);
 * MySQL writes a stage mark; PostgreSQL wakes idle workers. The history trigger (1-task-history.sql) adds
 * the transition. A finished task holds no slot (its slots were released when it finished):
 * nothing to free or take here.
 * Locks: the task row FOR UPDATE (the status check and the UPDATE see the same row), then the
 * UPDATE guarded by the status again.
 */
export async function requeue(c: StoreContext, id: string): Promise<Transition> {
  return c.db.tx(async (x) => {
    const T = raw(c.t.tasks);
    const lock = raw(c.d.rowLocks ? ' FOR UPDATE' : '');
    const [r] = await q(x, sql`SELECT ${raw(TASK_COLUMNS)} FROM ${T} WHERE ${byId(c, id)}${lock}`);
    if (!r) throw new TaskNotFoundError(id);
    const from = String(r.status) as TaskStatus;
    if (!isRetryable(from)) throw new InvalidStateError(Messages.cannotRetry(id, from));
    const now = await c.now(x);
    // a requeued task keeps its fair tag (DESIGN §7: tags change only with the level)
    const { k1, k2 } = orderColumns({ priority: num(r.priority), runAt: now, fairTag: fairTagOf(r.k2) }, c.aging, c.fair);
    const changed = await run(
      x,
      sql`UPDATE ${T} SET status = 'PENDING_SUBMIT', staged = 1, run_at = ${now}, k1 = ${c.big(k1)}, k2 = ${c.big(k2)},
          deadline_at = CASE WHEN deadline_at IS NULL THEN NULL ELSE ${now} + (deadline_at - created_at) END,
          attempts = 0, poll_errors = 0, cancel_requested = 0, error = NULL, result = NULL, external_id = NULL,
          next_poll_at = NULL, finished_at = NULL, lease_owner = NULL, lease_id = NULL, lease_until = NULL,
          version = version + 1, updated_at = ${now}
        WHERE ${keyColumn(c)} = ${keyOf(c, r)} AND status IN (${list(RETRYABLE_STATUSES)})`,
    );
    if (changed !== 1) throw new InvalidStateError(Messages.cannotRetry(id, from)); // changed meanwhile (SQLite never gets here)
    await markStaged(x, c, now);
    if (c.d.kind === 'postgres') await x.rows(...notifyArgs(c));
    const [after] = await q(x, sql`SELECT ${raw(TASK_COLUMNS)} FROM ${T} WHERE ${keyColumn(c)} = ${keyOf(c, r)}`);
    return { task: rowToTask(after, c.fair), from, to: TaskStatus.PENDING_SUBMIT };
  });
}
