import type { NewTask } from '../../../core/task';
import type { StoreContext } from '../context';
import { SUBMISSIONS_WAKE } from '../names';
import { orderColumnsSql } from '../order-columns';
import { fairTagOf, laneId } from '../rows';
import { pgFairTagFunctionName, pgStoreError } from '../schema/pg-functions';
import type { Inserted } from './insert-tasks';
import { raw, sql } from './sql';

/**
 * create() on PostgreSQL for a batch without idempotency keys: ONE statement (its own
 * transaction: all or none), the batch passed as one array per column and expanded by
 * `unnest ... WITH ORDINALITY`, so the statement text and its plan are the same for every batch
 * size (a named prepared statement). Order columns and times are computed server-side from one
 * clock reading; seq follows input order (rows are produced in ordinality order). The NOTIFY
 * of idle workers rides in the same statement when a task is due now.
 *
 * A task due now goes straight into its lane (`staged` = 0) and the statement adds one
 * `<prefix>lane_marks` row per lane of those tasks with the order key of its best one, which
 * the next claim merges into the lane's head (schema/postgres/1-claim.sql); a delayed task is
 * staged.
 *
 * DESIGN §7: with fairness each task's fair tag (k2) comes from `<prefix>fair_tag()`
 * (schema/postgres/1-fair-tags.sql) called in this statement with the batch's tenants and levels
 * in input order, so F[t,p] moves with the insert (all or none); a task with a deadline boost
 * gets boost_at = deadlineAt - W and boost_due = boost_at (unfired), which the claim fires.
 *
 * Locks: the new rows; with fairness also the `<prefix>fair_tags` rows of the batch's (tenant,
 * level) pairs, taken by fair_tag()'s upsert in a fixed order and held to the statement's commit:
 * two concurrent creates for one tenant and level are serialised on that row, the second tags
 * from the first's committed F (1-fair-tags.sql says why this neither repeats a tag nor loses an
 * update). Returns seq and (fairness) fair tag per task, and the creation time (the store clock).
 */
export async function insertTasksPg(
  c: StoreContext,
  tasks: readonly NewTask[],
  payloads: ReadonlyArray<string | null>,
  notify: boolean,
): Promise<{ inserted: Map<string, Inserted>; now: number }> {
  const T = c.t.tasks;
  // per lane of the tasks due now, its best task: highest priority, then first in the batch
  // (same run_at and created_at, seq in batch order)
  const lanes = new Map<string, NewTask>();
  const laneIds = tasks.map((t) => {
    const id = laneId(t);
    if (t.delayMs <= 0) {
      const best = lanes.get(id);
      if (!best || t.priority > best.priority) lanes.set(id, t);
    }
    return id;
  });
  const marked = [...lanes.values()];
  const arr = (values: readonly unknown[], type: string) => sql`${values}::${raw(type)}[]`;
  const now = sql`n.now`;
  const runAt = sql`(${now} + u.delay)`;
  // the order columns as the generic path writes them (order-columns.ts), over u.priority; with
  // fairness k2 is the task's fair tag (tg: fair_tag() of 1-fair-tags.sql, batch in input order)
  const k = orderColumnsSql(c, runAt);
  const k2 = c.fair ? sql`tg.tags[u.ord]` : k.k2;
  const fair = c.fair
    ? sql`,
    tg AS (SELECT ${raw(pgFairTagFunctionName(c.t))}(${c.queue}, array_agg(coalesce(u.tenant, '') ORDER BY u.ord), array_agg(u.priority ORDER BY u.ord)) AS tags FROM u)`
    : sql``;
  // a boost only with a deadline (core/task.ts newTaskRecord): boost_at = deadlineAt - W, unfired
  const boostW = tasks.map((t) => (t.timeoutMs === null || !t.boost ? null : t.boost.beforeDeadlineMs));
  const boostAt = sql`${now} + u.timeout - u.boost_w`;
  const s = sql`WITH n AS (SELECT coalesce(${c.clock ? c.clock.now() : null}::bigint, ${raw(c.d.nowMs)}) AS now),
    u AS (SELECT * FROM unnest(${arr(tasks.map((t) => t.id), 'varchar')}, ${arr(tasks.map((t) => t.type), 'varchar')}, ${arr(payloads, 'text')},
        ${arr(tasks.map((t) => t.priority), 'integer')}, ${arr(tasks.map((t) => t.delayMs), 'bigint')}, ${arr(tasks.map((t) => t.timeoutMs), 'bigint')},
        ${arr(laneIds, 'varchar')}, ${arr(tasks.map((t) => t.providerKey), 'varchar')}, ${arr(tasks.map((t) => t.accountId), 'varchar')},
        ${arr(tasks.map((t) => t.tenantId), 'varchar')}, ${arr(tasks.map((t) => t.concurrencyKey), 'varchar')},
        ${arr(tasks.map((t) => t.maxAttempts), 'integer')}, ${arr(tasks.map((t) => (t.idempotent ? 1 : 0)), 'smallint')},
        ${arr(boostW, 'bigint')}, ${arr(tasks.map((t, i) => (boostW[i] === null ? null : t.boost!.priority)), 'integer')})
        WITH ORDINALITY AS u(id, type, payload, priority, delay, timeout, lane, provider, account, tenant, ckey, max_attempts, idempotent,
          boost_w, boost_p, ord))${fair},
    ins AS (
      INSERT INTO ${raw(T)} (id, queue, idempotency_key, type, payload, priority, k1, k2, run_at, deadline_at, created_at, status, staged,
        lane_key, provider_key, account_id, tenant_id, concurrency_key, version, attempts, max_attempts, idempotent, poll_errors,
        cancel_requested, updated_at, history_limit, boost_at, boost_priority, boost_due)
      SELECT u.id, ${c.queue}, NULL, u.type, u.payload, u.priority, ${k.k1}, ${k2}, ${runAt}, ${now} + u.timeout, ${now}, 'PENDING_SUBMIT',
        CASE WHEN u.delay <= 0 THEN 0 ELSE 1 END,
        u.lane, u.provider, u.account, u.tenant, u.ckey, 1, 0, u.max_attempts, u.idempotent, 0, 0, ${now}, ${Math.trunc(c.historyLimit)},
        ${boostAt}, u.boost_p, ${boostAt}
      FROM n, u${raw(c.fair ? ', tg' : '')}
      ORDER BY u.ord
      RETURNING id, seq, created_at, k1, k2, run_at, priority),
    mk AS (INSERT INTO ${raw(c.t.laneMarks)} (queue, lane_key, provider_key, account_id, tenant_id, concurrency_key,
        k1, k2, run_at, created_at, seq, priority)
      SELECT ${c.queue}, m.lane, m.provider, m.account, m.tenant, m.ckey, i.k1, i.k2, i.run_at, i.created_at, i.seq, i.priority
      FROM unnest(${arr([...lanes.keys()], 'varchar')}, ${arr(marked.map((t) => t.providerKey), 'varchar')}, ${arr(marked.map((t) => t.accountId), 'varchar')},
        ${arr(marked.map((t) => t.tenantId), 'varchar')}, ${arr(marked.map((t) => t.concurrencyKey), 'varchar')}, ${arr(marked.map((t) => t.id), 'varchar')})
        AS m(lane, provider, account, tenant, ckey, id)
      JOIN ins i ON i.id = m.id)
    SELECT id, seq, created_at, k2, (SELECT pg_notify(${c.channel}, ${SUBMISSIONS_WAKE}) WHERE ${notify}::boolean) AS notified FROM ins ORDER BY seq`;
  const rows = await c.pg!.rows(c.d.placeholders(s.text), s.params).catch(pgStoreError);
  if (rows.length !== tasks.length) throw new Error(`create: ${rows.length} rows inserted for ${tasks.length} tasks`);
  return {
    inserted: new Map(rows.map((r): [string, Inserted] => [String(r.id), { seq: Number(r.seq), fairTag: c.fair ? fairTagOf(r.k2) : null }])),
    now: Number(rows[0].created_at),
  };
}
