import { isInFlight, TaskStatus, type Task } from '../../../core/task';
import { q, run, type StoreContext } from '../context';
import { num, rowToTask, TASK_COLUMNS } from '../rows';
import { byId } from './by-id';
import { notifyArgs } from './limits';
import { keyColumn, keyOf } from './row-key';
import { raw, sql } from './sql';

/**
 * cancel: PENDING_SUBMIT -> CANCELED at once (its lane is not touched: the lane's stored head
 * is a lower bound that the next claim corrects); SUBMITTING / SUBMITTED / RUNNING -> cancel
 * requested (the worker finalises it through claimPolls); terminal: unchanged.
 * Locks: the task row FOR UPDATE (a claim holding it makes us wait, then we see SUBMITTING).
 * A cancel request wakes the workers (PostgreSQL: NOTIFY at commit; elsewhere the store wakes
 * its process and the change watcher the others).
 */
export async function cancelTask(c: StoreContext, id: string): Promise<Task | null> {
  return c.db.tx(async (x) => {
    const T = raw(c.t.tasks);
    const lock = raw(c.d.rowLocks ? ' FOR UPDATE' : '');
    const [r] = await q(x, sql`SELECT ${raw(TASK_COLUMNS)} FROM ${T} WHERE ${byId(c, id)}${lock}`);
    if (!r) return null;
    const status = String(r.status) as TaskStatus;
    const now = await c.now(x);
    if (status === TaskStatus.PENDING_SUBMIT) {
      await run(
        x,
        sql`UPDATE ${T} SET status = 'CANCELED', version = version + 1, updated_at = ${now}, finished_at = ${now}, error = 'canceled'
          WHERE ${keyColumn(c)} = ${keyOf(c, r)}`,
      );
    } else if (isInFlight(status) && num(r.cancel_requested) !== 1) {
      await run(x, sql`UPDATE ${T} SET cancel_requested = 1, version = version + 1, updated_at = ${now} WHERE ${keyColumn(c)} = ${keyOf(c, r)}`);
      if (c.d.kind === 'postgres') await x.rows(...notifyArgs(c)); // claimPolls finalises it: wake the workers
    } else {
      return rowToTask(r, c.fair);
    }
    const [after] = await q(x, sql`SELECT ${raw(TASK_COLUMNS)} FROM ${T} WHERE ${keyColumn(c)} = ${keyOf(c, r)}`);
    return rowToTask(after, c.fair);
  });
}
