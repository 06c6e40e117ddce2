import { run, type StoreContext } from '../context';
import type { Exec } from '../db';
import { chunks } from '../rows';
import { list, raw, sql, Sql } from './sql';

/**
 * Claim step 6: the chosen PENDING_SUBMIT rows become SUBMITTING under a fresh lease, one
 * UPDATE by primary key. Each lease id is `<batch uuid>:<task id>`, so it is new for every
 * claim of every task.
 *
 * MySQL: `unstage` are rows the claim's merge took without writing their `staged = 0`
 * (sql/merge-staged.ts merge()): the claimed ones get it in this UPDATE, the others in one more.
 *
 * Locks: the rows were locked FOR UPDATE when the lane's tasks (or the due staged rows) were
 * read (queue lock held).
 */
export async function markClaimed(
  x: Exec,
  c: StoreContext,
  seqs: readonly number[],
  owner: string,
  batchId: string,
  leaseUntil: number,
  now: number,
  unstage: readonly number[] = [],
): Promise<void> {
  for (const s of markClaimedSql(c, seqs, owner, batchId, leaseUntil, now, unstage.length > 0)) await run(x, s);
  const claimed = new Set(seqs);
  const left = unstage.filter((s) => !claimed.has(s));
  // one statement, as the merge's own UPDATE was (a first claim after a bulk submit leaves thousands)
  if (left.length > 0) await run(x, sql`UPDATE ${raw(c.t.tasks)} SET staged = 0 WHERE seq IN (${list(left)})`);
}

export function markClaimedSql(
  c: StoreContext,
  seqs: readonly number[],
  owner: string,
  batchId: string,
  leaseUntil: number,
  now: number,
  unstage = false,
): Sql[] {
  const cast = c.d.kind === 'postgres' ? '::text' : '';
  return chunks(seqs, 1000).map(
    (part) =>
      sql`UPDATE ${raw(c.t.tasks)} SET status = 'SUBMITTING',${raw(unstage ? ' staged = 0,' : '')} lease_owner = ${owner},
          lease_id = ${new Sql(c.d.concat('?' + cast, "':'", 'id'), [batchId])}, lease_until = ${leaseUntil},
          version = version + 1, updated_at = ${now}
        WHERE seq IN (${list(part)})`,
  );
}
