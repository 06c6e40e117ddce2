import { randomUUID } from 'node:crypto';
import { answerOf } from '../../../core/complete-and-claim';
import type { ClaimRequest, CompleteAndClaimResult, CompleteCall } from '../../../core/task-store.port';
import { claimSubmissions } from '../claim-submissions';
import { fromRows, pgClaimArgs, pgClaimQueueArgs } from '../claim-submissions.pg';
import type { StoreContext } from '../context';
import { retryOnConflict, type Row } from '../db';
import { PG_TASK_RESULT, perTables, pgCompleteAndClaimFunctionName, pgStoreError } from '../schema/pg-functions';
import { completeAnswers, completeMysqlIn, completeOne, completeWrite, pgCompleteArgs, pgCompleteRows, type Pending, type PgCompleteRow } from './complete-batch';
import { fencedWriteIn } from './fenced-write';

/**
 * TaskStore.completeAndClaim on the TypeORM stores (completes without a removal rule; the store
 * sends a batch with one through complete() and claimSubmissions() apart):
 * - PostgreSQL: ONE call of `<prefix>complete_and_claim` (schema/postgres/1-complete-and-claim.sql:
 *   complete_leased, then claim, in the statement's transaction). A cached complete whose row
 *   moved (its ctid is stale, the version is not) is written again on its own afterwards, as the
 *   complete batch does: rare (VACUUM FULL), and the claim did not see its slots.
 * - MySQL / MariaDB and SQLite: ONE transaction under the queue lock: the completes as the complete
 *   batch (MySQL) or completeOne (SQLite) write them, then the claim of claim-submissions.ts.
 */
export async function completeAndClaimSql(c: StoreContext, completes: readonly CompleteCall[], req: ClaimRequest): Promise<CompleteAndClaimResult> {
  const items: Pending[] = completes.map((k) => ({ fence: k.fence, outcome: k.outcome, now: c.clock ? c.clock.now() : null }));
  if (c.d.kind === 'postgres') return completeAndClaimPg(c, items, req);
  let rows: Row[] = [];
  const claim = await claimSubmissions(c, req, async (x) => {
    rows = []; // the transaction may run again (a deadlock): only its last run counts
    if (items.length === 0) return;
    if (c.d.kind === 'mysql') rows = await completeMysqlIn(x, c, items);
    else for (const p of items) {
      const r = await fencedWriteIn(x, c, p.fence, completeWrite(c, p.outcome));
      if (r) rows.push(r);
    }
  });
  for (const p of items) c.leased.delete(p.fence.id);
  return { completed: await Promise.all(completeAnswers(c, items, rows).map((a) => answerOf(Promise.resolve(a)))), claim };
}

const combinedText = perTables(
  (t) => `SELECT f.* FROM ${pgCompleteAndClaimFunctionName(t)}($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19)
      AS f(part, kind, wake, tid, ${PG_TASK_RESULT.map(([n]) => n).join(', ')})`,
);

async function completeAndClaimPg(c: StoreContext, items: readonly Pending[], req: ClaimRequest): Promise<CompleteAndClaimResult> {
  const text = combinedText(c.t);
  const cached = items.map((p) => c.leased.match(p.fence));
  const { got, claim } = await retryOnConflict(c.d, async () => {
    const batch = randomUUID();
    const rows = await c.pg!.rows(text, [
      c.queue,
      ...pgCompleteArgs(items, cached),
      ...pgClaimArgs(c, req, batch),
      ...pgClaimQueueArgs(c),
    ]).catch(pgStoreError);
    const claimRows: Row[] = [];
    const completeRows: PgCompleteRow[] = [];
    for (const r of rows) {
      if (Number(r.part) === 2) claimRows.push(r);
      else completeRows.push({ kind: Number(r.kind), id: String(r.id), finishedAt: r.finished_at, whole: () => r });
    }
    return { got: completeRows, claim: fromRows(c, claimRows, req, batch) };
  });
  const { rows, again } = pgCompleteRows(c, items, cached, got);
  // a cached call whose row moved: written again alone, as the complete batch does
  const moved = new Set(again);
  const rest = items.filter((p) => !moved.has(p));
  const answers = new Map(completeAnswers(c, rest, rows).map((a, i) => [rest[i], a]));
  const completed = await Promise.all(items.map((p) => answerOf(moved.has(p) ? completeOne(c, p.fence, p.outcome) : Promise.resolve(answers.get(p)!))));
  return { completed, claim };
}
