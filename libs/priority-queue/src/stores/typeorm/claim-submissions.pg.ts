import { randomUUID } from 'node:crypto';
import { compareOrder } from '../../core/order-key';
import type { Task } from '../../core/task';
import type { BoostedTask, ClaimRequest, SubmissionClaim } from '../../core/task-store.port';
import type { StoreContext } from './context';
import { retryOnConflict, type Row } from './db';
import { num, numOrNull, rowToTask } from './rows';
import { PG_TASK_RESULT, perTables, pgClaimFunctionName, pgStoreError } from './schema/pg-functions';

/**
 * claimSubmissions on PostgreSQL in ONE round trip: the `<prefix>claim` function
 * (schema/postgres/1-claim.sql) runs the whole claim of claim-submissions.ts server-side in the
 * statement's own transaction (advisory queue lock until its COMMIT) and returns the claimed
 * and timed-out rows plus the next wake-up, and (DESIGN §7) the tasks its due deadline boosts
 * raised, in firing order, as the boosts wrote them. Each claimed row comes with its ctid, kept with the
 * row in the lease cache for the task's complete (context.ts LeasedRow).
 */
export async function claimSubmissionsPg(c: StoreContext, req: ClaimRequest): Promise<SubmissionClaim> {
  const text = claimText(c.t);
  return retryOnConflict(c.d, async () => {
    const batch = randomUUID();
    const rows = await c.pg!.rows(text, [c.queue, ...pgClaimArgs(c, req, batch), ...pgClaimQueueArgs(c)]).catch(pgStoreError);
    return fromRows(c, rows, req, batch);
  });
}

const claimText = perTables(
  (t) => `SELECT * FROM ${pgClaimFunctionName(t)}($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) AS f(kind, wake, tid, ${PG_TASK_RESULT.map(([n]) => n).join(', ')})`,
);

/**
 * The claim arguments the PostgreSQL claim functions share after the queue name (claim,
 * complete_and_claim, claim_polls): the store clock (null = the server's now()), the limit, the
 * lease length, the owner and the call's batch id (lease ids are `<batch>:<task id>`).
 */
export function pgClaimArgs(c: StoreContext, req: ClaimRequest, batch: string): unknown[] {
  return [c.clock ? c.clock.now() : null, Math.max(0, Math.floor(req.limit)), req.leaseMs, req.owner, batch];
}

/**
 * The claim function's arguments after those of pgClaimArgs (claim, complete_and_claim): the
 * queue's advisory lock keys, its aging interval and whether it has fairness (what init() holds
 * equal to the queues row, so the claim does not read it).
 */
export function pgClaimQueueArgs(c: StoreContext): unknown[] {
  return [...c.db.lockKeys, c.aging, c.fair];
}

/** The claim function's rows as the claim (completeAndClaim reads its part of the combined call's rows with it). */
export function fromRows(c: StoreContext, rows: Row[], req: ClaimRequest, batch: string): SubmissionClaim {
  const claimed: Task[] = [];
  const timedOut: Task[] = [];
  const boosted: BoostedTask[] = [];
  let wake: number | null = null;
  for (const r of rows) {
    const kind = Number(r.kind);
    if (kind === 0) wake = numOrNull(r.wake);
    else if (kind === 3) boosted.push({ task: rowToTask(r, c.fair), fromPriority: num(r.wake) }); // wake = the priority before
    else if (kind === 1) {
      // a claimed row leaves out what the call itself says (status, lease owner, lease id,
      // lease end, updated_at; staged and lane_key are not task fields); wake = the claim's now
      const now = num(r.wake);
      r.status = 'SUBMITTING';
      r.lease_owner = req.owner;
      r.lease_id = `${batch}:${String(r.id)}`;
      r.lease_until = now + req.leaseMs;
      r.updated_at = now;
      claimed.push(rowToTask(r, c.fair));
      if (r.tid !== null && r.tid !== undefined) c.leased.set(String(r.id), { row: r, ctid: String(r.tid), leaseId: String(r.lease_id), version: num(r.version) });
    } else timedOut.push(rowToTask(r, c.fair));
  }
  const cmp = (x: Task, y: Task) => compareOrder(x, y, c.aging);
  const out: SubmissionClaim = { claimed: claimed.sort(cmp), timedOut: timedOut.sort(cmp), nextWakeAt: wake };
  if (boosted.length > 0) out.boosted = boosted;
  return out;
}
