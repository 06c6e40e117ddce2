import { InvalidStateError, TaskNotFoundError } from '../../../core/errors';
import { Messages } from '../../../core/messages';
import { TaskStatus, type Task } from '../../../core/task';
import { q, run, type StoreContext } from '../context';
import { orderColumns } from '../order-columns';
import { num, rowToTask, TASK_COLUMNS } from '../rows';
import { byId } from './by-id';
import { keyColumn, keyOf } from './row-key';
import { raw, sql } from './sql';
import { markStaged } from './stage-marks';

/**
 * changePriority (PENDING_SUBMIT only): new priority and order columns, and the task is staged
 * again, so the next claim merges it into its lane with its new key, atomically with every
 * index (the lane's stored head stays a valid lower bound).
 * Locks: the task row FOR UPDATE.
 */
export async function changePriority(c: StoreContext, id: string, priority: number): Promise<Task> {
  return c.db.tx(async (x) => {
    const T = raw(c.t.tasks);
    const lock = raw(c.d.rowLocks ? ' FOR UPDATE' : '');
    const [r] = await q(x, sql`SELECT ${raw(TASK_COLUMNS)} FROM ${T} WHERE ${byId(c, id)}${lock}`);
    if (!r) throw new TaskNotFoundError(id);
    if (String(r.status) !== TaskStatus.PENDING_SUBMIT) throw new InvalidStateError(Messages.notPending(id, String(r.status)));
    const now = await c.now(x);
    const { k1, k2 } = orderColumns({ priority, runAt: num(r.run_at) }, c.aging);
    await run(
      x,
      sql`UPDATE ${T} SET priority = ${priority}, k1 = ${c.big(k1)}, k2 = ${c.big(k2)}, staged = 1, version = version + 1, updated_at = ${now}
        WHERE ${keyColumn(c)} = ${keyOf(c, r)}`,
    );
    await markStaged(x, c, num(r.run_at));
    const [after] = await q(x, sql`SELECT ${raw(TASK_COLUMNS)} FROM ${T} WHERE ${keyColumn(c)} = ${keyOf(c, r)}`);
    return rowToTask(after);
  });
}
