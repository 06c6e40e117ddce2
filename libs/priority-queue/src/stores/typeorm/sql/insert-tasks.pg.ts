import type { NewTask } from '../../../core/task';
import type { StoreContext } from '../context';
import { orderColumnsSql } from '../order-columns';
import { laneId } from '../rows';
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
 * Locks: only the new rows. Returns seq per task and the creation time (the store clock).
 */
export async function insertTasksPg(
  c: StoreContext,
  tasks: readonly NewTask[],
  payloads: ReadonlyArray<string | null>,
  notify: boolean,
): Promise<{ seqs: Map<string, number>; now: number }> {
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
  // the order columns as the generic path writes them (order-columns.ts), over u.priority
  const { k1, k2 } = orderColumnsSql(c, runAt);
  const s = sql`WITH n AS (SELECT coalesce(${c.clock ? c.clock.now() : null}::bigint, ${raw(c.d.nowMs)}) AS now),
    ins AS (
      INSERT INTO ${raw(T)} (id, queue, idempotency_key, type, payload, priority, k1, k2, run_at, deadline_at, created_at, status, staged,
        lane_key, provider_key, account_id, tenant_id, concurrency_key, version, attempts, max_attempts, idempotent, poll_errors,
        cancel_requested, updated_at, history_limit)
      SELECT u.id, ${c.queue}, NULL, u.type, u.payload, u.priority, ${k1}, ${k2}, ${runAt}, ${now} + u.timeout, ${now}, 'PENDING_SUBMIT',
        CASE WHEN u.delay <= 0 THEN 0 ELSE 1 END,
        u.lane, u.provider, u.account, u.tenant, u.ckey, 1, 0, u.max_attempts, u.idempotent, 0, 0, ${now}, ${Math.trunc(c.historyLimit)}
      FROM n, unnest(${arr(tasks.map((t) => t.id), 'varchar')}, ${arr(tasks.map((t) => t.type), 'varchar')}, ${arr(payloads, 'text')},
        ${arr(tasks.map((t) => t.priority), 'integer')}, ${arr(tasks.map((t) => t.delayMs), 'bigint')}, ${arr(tasks.map((t) => t.timeoutMs), 'bigint')},
        ${arr(laneIds, 'varchar')}, ${arr(tasks.map((t) => t.providerKey), 'varchar')}, ${arr(tasks.map((t) => t.accountId), 'varchar')},
        ${arr(tasks.map((t) => t.tenantId), 'varchar')}, ${arr(tasks.map((t) => t.concurrencyKey), 'varchar')},
        ${arr(tasks.map((t) => t.maxAttempts), 'integer')}, ${arr(tasks.map((t) => (t.idempotent ? 1 : 0)), 'smallint')})
        WITH ORDINALITY AS u(id, type, payload, priority, delay, timeout, lane, provider, account, tenant, ckey, max_attempts, idempotent, ord)
      ORDER BY u.ord
      RETURNING id, seq, created_at, k1, k2, run_at, priority),
    mk AS (INSERT INTO ${raw(c.t.laneMarks)} (queue, lane_key, provider_key, account_id, tenant_id, concurrency_key,
        k1, k2, run_at, created_at, seq, priority)
      SELECT ${c.queue}, m.lane, m.provider, m.account, m.tenant, m.ckey, i.k1, i.k2, i.run_at, i.created_at, i.seq, i.priority
      FROM unnest(${arr([...lanes.keys()], 'varchar')}, ${arr(marked.map((t) => t.providerKey), 'varchar')}, ${arr(marked.map((t) => t.accountId), 'varchar')},
        ${arr(marked.map((t) => t.tenantId), 'varchar')}, ${arr(marked.map((t) => t.concurrencyKey), 'varchar')}, ${arr(marked.map((t) => t.id), 'varchar')})
        AS m(lane, provider, account, tenant, ckey, id)
      JOIN ins i ON i.id = m.id)
    SELECT id, seq, created_at, (SELECT pg_notify(${c.channel}, '') WHERE ${notify}::boolean) AS notified FROM ins ORDER BY seq`;
  const rows = await c.pg!.rows(c.d.placeholders(s.text), s.params);
  if (rows.length !== tasks.length) throw new Error(`create: ${rows.length} rows inserted for ${tasks.length} tasks`);
  return { seqs: new Map(rows.map((r) => [String(r.id), Number(r.seq)])), now: Number(rows[0].created_at) };
}
