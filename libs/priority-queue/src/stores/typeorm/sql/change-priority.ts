import { InvalidStateError, TaskNotFoundError } from '../../../core/errors';
import { Messages } from '../../../core/messages';
import { TaskStatus, type Task } from '../../../core/task';
import { q, run, type StoreContext } from '../context';
import { orderColumns } from '../order-columns';
import { fairTagOf, num, rowToTask, strOrNull, TASK_COLUMNS } from '../rows';
import { tagTasks } from './fair-tags';
import { byId } from './by-id';
import { keyColumn, keyOf } from './row-key';
import { raw, sql } from './sql';
import { markStaged } from './stage-marks';

/**
 * changePriority (PENDING_SUBMIT only): new priority and order columns, and the task is staged
 * again, so the next claim merges it into its lane with its new key, atomically with every
 * index (the lane's stored head stays a valid lower bound). DESIGN §7: with fairness a change
 * to another level re-tags the task there (sql/fair-tags.ts); a due boost that has not fired
 * fires unused (boost_due = NULL: the explicit priority wins, core/boost.ts).
 * Locks: the task row FOR UPDATE (then, re-tagging, its tenant's F row at the new level).
 */
export async function changePriority(c: StoreContext, id: string, priority: number): Promise<Task> {
  return c.db.tx(async (x) => {
    const T = raw(c.t.tasks);
    const lock = raw(c.d.rowLocks ? ' FOR UPDATE' : '');
    const [r] = await q(x, sql`SELECT ${raw(TASK_COLUMNS)} FROM ${T} WHERE ${byId(c, id)}${lock}`);
    if (!r) throw new TaskNotFoundError(id);
    if (String(r.status) !== TaskStatus.PENDING_SUBMIT) throw new InvalidStateError(Messages.notPending(id, String(r.status)));
    const now = await c.now(x);
    let fairTag = c.fair ? fairTagOf(r.k2) : undefined;
    if (c.fair && priority !== num(r.priority)) [fairTag] = (await tagTasks(x, c, [{ tenantId: strOrNull(r.tenant_id), priority }])).map(String);
    const { k1, k2 } = orderColumns({ priority, runAt: num(r.run_at), fairTag }, c.aging, c.fair);
    await run(
      x,
      sql`UPDATE ${T} SET priority = ${priority}, k1 = ${c.big(k1)}, k2 = ${c.big(k2)}, staged = 1, version = version + 1, updated_at = ${now},
        boost_due = CASE WHEN boost_due <= ${now} THEN NULL ELSE boost_due END
        WHERE ${keyColumn(c)} = ${keyOf(c, r)}`,
    );
    await markStaged(x, c, num(r.run_at));
    const [after] = await q(x, sql`SELECT ${raw(TASK_COLUMNS)} FROM ${T} WHERE ${keyColumn(c)} = ${keyOf(c, r)}`);
    return rowToTask(after, c.fair);
  });
}
