import { randomUUID } from 'node:crypto';
import type { Task } from '../../../core/task';
import type { ClaimRequest } from '../../../core/task-store.port';
import type { StoreContext } from '../context';
import { retryOnConflict } from '../db';
import { rowToTask } from '../rows';
import { pgClaimArgs } from '../claim-submissions.pg';
import { pgClaimPollsFunctionName } from '../schema/pg-functions';
import { sql, Sql } from './sql';
import { updateReturning } from './update-returning';

/**
 * claimPolls: SUBMITTED / RUNNING tasks due for a poll (or with a cancel request) and without a
 * live lease get a lease; earliest nextPollAt first. No admission, no queue lock: workers
 * claim disjoint rows with `FOR UPDATE SKIP LOCKED` (PostgreSQL, MySQL 8, MariaDB 10.6); SQLite
 * has one writer. PostgreSQL: one round trip (`<prefix>claim_polls`, schema/postgres/1-claim-polls.sql). Reads the partial index (queue, next_poll_at) of SUBMITTED / RUNNING rows,
 * and the tiny partial index of cancel requests.
 */
export async function claimPolls(c: StoreContext, req: ClaimRequest): Promise<Task[]> {
  if (req.limit <= 0) return [];
  const batchId = randomUUID();
  if (c.pg) {
    const pg = c.pg;
    const rows = await retryOnConflict(c.d, () => pg.rows(`SELECT * FROM ${pgClaimPollsFunctionName(c.t)}($1, $2, $3, $4, $5, $6)`, [c.queue, ...pgClaimArgs(c, req, batchId)]));
    return rows.map((r) => rowToTask(r, c.fair)).sort(byPoll);
  }
  return c.db.tx(async (x) => {
    const now = await c.now(x);
    const cast = c.d.kind === 'postgres' ? '::text' : '';
    const set = sql`lease_owner = ${req.owner}, lease_id = ${new Sql(c.d.concat('?' + cast, "':'", 'id'), [batchId])},
      lease_until = ${now + req.leaseMs}, version = version + 1, updated_at = ${now}`;
    const free = sql`(lease_until IS NULL OR lease_until <= ${now})`;
    const canceled = await updateReturning(x, c, {
      where: sql`cancel_requested = 1 AND status IN ('SUBMITTED', 'RUNNING') AND ${free}`,
      set,
      orderBy: 'next_poll_at',
      limit: req.limit,
      skipLocked: true,
    });
    const due =
      canceled.length < req.limit
        ? await updateReturning(x, c, {
            where: sql`status IN ('SUBMITTED', 'RUNNING') AND next_poll_at <= ${now} AND ${free} AND cancel_requested = 0`,
            set,
            orderBy: 'next_poll_at',
            limit: req.limit - canceled.length,
            skipLocked: true,
          })
        : [];
    return [...canceled, ...due].map((r) => rowToTask(r, c.fair)).sort(byPoll);
  });
}

function byPoll(a: Task, b: Task): number {
  return (a.nextPollAt ?? 0) - (b.nextPollAt ?? 0) || a.seq - b.seq;
}
