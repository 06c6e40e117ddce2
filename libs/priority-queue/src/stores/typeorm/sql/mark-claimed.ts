import { run, type StoreContext } from '../context';
import type { Exec } from '../db';
import { chunks } from '../rows';
import { list, raw, sql, Sql } from './sql';

/**
 * Claim step 6: the chosen PENDING_SUBMIT rows become SUBMITTING under a fresh lease, one
 * UPDATE by primary key. Each lease id is `<batch uuid>:<task id>`, so it is new for every
 * claim of every task.
 *
 * Locks: the rows were locked FOR UPDATE when the lane's tasks were read (queue lock held).
 */
export async function markClaimed(
  x: Exec,
  c: StoreContext,
  seqs: readonly number[],
  owner: string,
  batchId: string,
  leaseUntil: number,
  now: number,
): Promise<void> {
  for (const s of markClaimedSql(c, seqs, owner, batchId, leaseUntil, now)) await run(x, s);
}

export function markClaimedSql(c: StoreContext, seqs: readonly number[], owner: string, batchId: string, leaseUntil: number, now: number): Sql[] {
  const cast = c.d.kind === 'postgres' ? '::text' : '';
  return chunks(seqs, 1000).map(
    (part) =>
      sql`UPDATE ${raw(c.t.tasks)} SET status = 'SUBMITTING', lease_owner = ${owner},
          lease_id = ${new Sql(c.d.concat('?' + cast, "':'", 'id'), [batchId])}, lease_until = ${leaseUntil},
          version = version + 1, updated_at = ${now}
        WHERE seq IN (${list(part)})`,
  );
}
