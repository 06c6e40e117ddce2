import { TaskStatus, type Fence, type Task } from '../../../core/task';
import type { StoreContext } from '../context';
import { fencedWrite } from './fenced-write';
import { sql } from './sql';

/**
 * release (port: the holder gives a claimed task back untouched): retry without its changes.
 * SUBMITTING -> PENDING_SUBMIT with attempts, run_at, priority, error and so the order columns
 * (k1, k2) unchanged; staged, so the next claim merges it back into its lane at its old place;
 * lease cleared; a releases row frees its slots. A cancel-requested task becomes CANCELED.
 * Fenced; one UPDATE like every fenced write (sql/fenced-write.ts).
 */
export function releaseClaim(c: StoreContext, fence: Fence): Promise<Task> {
  return fencedWrite(c, fence, {
    set: sql`finished_at = CASE WHEN cancel_requested = 1 THEN ${c.nowSql()} ELSE NULL END,
      status = CASE WHEN cancel_requested = 1 THEN 'CANCELED' ELSE 'PENDING_SUBMIT' END,
      staged = 1, lease_owner = NULL, lease_id = NULL, lease_until = NULL`,
    from: [TaskStatus.SUBMITTING],
    release: true,
    op: 'release',
    stages: true,
  });
}
