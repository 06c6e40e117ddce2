import { REMOVAL_TRIM_MAX, removalSide, type RemovalRule } from '../../../core/removal';
import { TaskStatus, TERMINAL_STATUSES, type Fence, type Task } from '../../../core/task';
import type { CompletionOutcome } from '../../../core/task-store.port';
import { q, run, type StoreContext } from '../context';
import type { Exec, Row } from '../db';
import { laneKeysOf, rowToTask, slotKeys, TASK_COLUMNS } from '../rows';
import { byId } from './by-id';
import { HOLDS_SLOTS, whyRejected } from './fenced-write';
import { keyColumn, keyOf } from './row-key';
import { list, raw, sql, type Sql } from './sql';

const LIVE = [TaskStatus.SUBMITTING, TaskStatus.SUBMITTED, TaskStatus.RUNNING];
const FAIL_SIDE = TERMINAL_STATUSES.filter((s) => s !== TaskStatus.SUCCEEDED);

function resultJson(o: CompletionOutcome): string | null {
  return o.result === undefined ? null : JSON.stringify(o.result);
}

/**
 * complete() with a removal rule (core/removal.ts), outside the complete batcher:
 * - rule `now`, PostgreSQL: RemovingCompleter below, ONE statement for the calls of one
 *   event-loop turn.
 * - otherwise (and rule `now` on MySQL / SQLite): one transaction: the fenced UPDATE of
 *   completeOne with its slot release, then the DELETE of the task (`now`) or of the finished
 *   tasks of its type and side beyond the rule's count / age (at most REMOVAL_TRIM_MAX, the
 *   oldest; read through the tasks_trim index (queue, type, status, finished_at): only that
 *   type's finished rows of that status, however many the queue keeps of other types; at 100k
 *   finished rows, 1 % of them the trimmed type, the count read went from 100k rows read to 1,000
 *   on MariaDB, from a sequential scan to an index-only one on PostgreSQL, see
 *   test/bench/profile/removal-trim-plan.ts). Locks: the task row, then the deleted rows.
 */
export async function completeRemoving(c: StoreContext, fence: Fence, outcome: CompletionOutcome, rule: RemovalRule): Promise<Task> {
  const T = raw(c.t.tasks);
  const now = c.nowSql();
  const where = sql`${byId(c, fence.id)} AND lease_id = ${fence.leaseId} AND version = ${fence.version} AND status IN (${list(LIVE)})`;
  const attempts = outcome.attempt ? 1 : 0;
  let row: Row | undefined;
  {
    const set = sql`status = ${outcome.status}, result = ${resultJson(outcome)}, error = ${outcome.error ?? null}, finished_at = ${now},
      attempts = attempts + ${attempts}, lease_owner = NULL, lease_id = NULL, lease_until = NULL, next_poll_at = NULL,
      version = version + 1, updated_at = ${now}`;
    row = await c.db.tx(
      async (x) => {
        let r: Row | undefined;
        if (c.d.returning) [r] = await q(x, sql`UPDATE ${T} SET ${set} WHERE ${where} RETURNING ${raw(TASK_COLUMNS)}`);
        else if ((await run(x, sql`UPDATE ${T} SET ${set} WHERE ${where}`)) > 0)
          [r] = await q(x, sql`SELECT ${raw(TASK_COLUMNS)} FROM ${T} WHERE ${byId(c, fence.id)}`);
        if (!r) return r;
        if (slotKeys(laneKeysOf(r)).length > 0) {
          await run(x, sql`INSERT INTO ${raw(c.t.releases)} (queue, lane_key) VALUES (${c.queue}, ${String(r.lane_key)})`);
        }
        const gone = rule.now ? [keyOf(c, r)] : await beyondRule(x, c, r, rule);
        if (gone.length > 0) await run(x, sql`DELETE FROM ${T} WHERE ${keyColumn(c)} IN (${list(gone)})`);
        return r;
      },
      { readCommitted: false },
    );
  }
  c.leased.delete(fence.id);
  if (row) return rowToTask(row, c.fair);
  throw await whyRejected(c, fence, { from: LIVE, op: 'complete' });
}

/** The row of a task deleted by its complete: the row as it was with the terminal fields of the outcome. */
function finishedRow(d: Row, outcome: CompletionOutcome): Row {
  const at = Number(d.pq_now);
  return {
    ...d,
    status: outcome.status,
    result: resultJson(outcome),
    error: outcome.error ?? null,
    finished_at: at,
    updated_at: at,
    attempts: Number(d.attempts) + (outcome.attempt ? 1 : 0),
    lease_owner: null,
    lease_id: null,
    lease_until: null,
    next_poll_at: null,
    version: Number(d.version) + 1,
  };
}

interface PendingRemoval {
  fence: Fence;
  outcome: CompletionOutcome;
  resolve(t: Task): void;
  reject(e: unknown): void;
}

const MAX_BATCH = 500;

/**
 * complete() with removal rule `now` on PostgreSQL: the calls of one event-loop turn go to the
 * server as ONE statement, a fenced DELETE ... USING unnest(ids, lease ids, versions) RETURNING
 * the rows as they were (the terminal fields are applied here), with the release of their slots
 * in a data-modifying CTE: a task never exists in its terminal state. A call whose fence matched
 * no row learns why (whyRejected). Locks: the deleted rows.
 */
export class RemovingCompleter {
  private pending: PendingRemoval[] = [];
  private scheduled = false;

  constructor(private readonly c: StoreContext) {}

  complete(fence: Fence, outcome: CompletionOutcome): Promise<Task> {
    return new Promise<Task>((resolve, reject) => {
      this.pending.push({ fence, outcome, resolve, reject });
      if (this.scheduled) return;
      this.scheduled = true;
      setImmediate(() => this.flush());
    });
  }

  private flush(): void {
    this.scheduled = false;
    const seen = new Set<string>();
    const later: PendingRemoval[] = [];
    let batch: PendingRemoval[] = [];
    for (const p of this.pending.splice(0)) {
      if (seen.has(p.fence.id) || batch.length === MAX_BATCH) later.push(p); // one call per task per statement
      else {
        seen.add(p.fence.id);
        batch.push(p);
      }
    }
    void this.run(batch);
    if (later.length > 0) {
      this.pending.unshift(...later);
      this.scheduled = true;
      setImmediate(() => this.flush());
    }
  }

  private async run(items: PendingRemoval[]): Promise<void> {
    const c = this.c;
    const T = raw(c.t.tasks);
    const s = sql`WITH b AS (SELECT * FROM unnest(${items.map((p) => p.fence.id)}::text[], ${items.map((p) => p.fence.leaseId)}::text[],
        ${items.map((p) => p.fence.version)}::int[]) AS b(id, lease_id, version)),
      d AS (DELETE FROM ${T} t USING b WHERE t.id = b.id AND t.queue || '' = ${c.queue} AND t.lease_id = b.lease_id AND t.version = b.version
        AND t.status IN (${list(LIVE)}) RETURNING t.queue, ${raw(TASK_COLUMNS.split(', ').map((col) => 't.' + col).join(', '))}, ${c.nowSql()} AS pq_now),
      r AS (INSERT INTO ${raw(c.t.releases)} (queue, lane_key) SELECT queue, lane_key FROM d WHERE ${raw(HOLDS_SLOTS)}) SELECT * FROM d`;
    let rows: Row[];
    try {
      rows = await c.pg!.rows(c.d.placeholders(s.text), s.params);
    } catch (e) {
      if (items.length === 1) items[0].reject(e);
      else for (const p of items) void this.run([p]);
      return;
    }
    const byId = new Map(rows.map((r) => [String(r.id), r]));
    for (const p of items) {
      c.leased.delete(p.fence.id);
      const r = byId.get(p.fence.id);
      if (r) p.resolve(rowToTask(finishedRow(r, p.outcome), c.fair));
      else whyRejected(c, p.fence, { from: LIVE, op: 'complete' }).then(p.reject, p.reject);
    }
  }
}

/** Keys of the finished tasks of `r`'s type and side beyond the rule (oldest first, at most REMOVAL_TRIM_MAX). */
async function beyondRule(x: Exec, c: StoreContext, r: Row, rule: Extract<RemovalRule, { now: false }>): Promise<unknown[]> {
  const T = raw(c.t.tasks);
  const key = keyColumn(c);
  const side = removalSide(String(r.status) as TaskStatus) === 'ok' ? [TaskStatus.SUCCEEDED] : FAIL_SIDE;
  const mine: Sql = sql`queue = ${c.queue} AND type = ${String(r.type)} AND status IN (${list(side)}) AND finished_at IS NOT NULL`;
  const out = new Set<unknown>();
  if (rule.count !== null) {
    const rows = await q(x, sql`SELECT ${key} AS k FROM ${T} WHERE ${mine}
      ORDER BY finished_at DESC, seq DESC LIMIT ${raw(String(REMOVAL_TRIM_MAX))} OFFSET ${raw(String(rule.count))}`);
    for (const k of rows) out.add(k.k);
  }
  if (rule.ageMs !== null && out.size < REMOVAL_TRIM_MAX) {
    const cutoff = Number(r.finished_at) - rule.ageMs;
    const rows = await q(x, sql`SELECT ${key} AS k FROM ${T} WHERE ${mine} AND finished_at <= ${cutoff}
      ORDER BY finished_at LIMIT ${raw(String(REMOVAL_TRIM_MAX))}`);
    for (const k of rows) if (out.size < REMOVAL_TRIM_MAX) out.add(k.k);
  }
  return [...out];
}
