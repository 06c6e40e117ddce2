import type { NewTask } from '../../../core/task';
import type { StoreContext } from '../context';
import { laneId } from '../rows';

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
  const marks = `,
    mk AS (INSERT INTO ${c.t.laneMarks} (queue, lane_key, provider_key, account_id, tenant_id, concurrency_key,
        k1, k2, run_at, created_at, seq, priority)
      SELECT $2, m.lane, m.provider, m.account, m.tenant, m.ckey, i.k1, i.k2, i.run_at, i.created_at, i.seq, i.priority
      FROM unnest($19::varchar[], $20::varchar[], $21::varchar[], $22::varchar[], $23::varchar[], $24::varchar[])
        AS m(lane, provider, account, tenant, ckey, id)
      JOIN ins i ON i.id = m.id)`;
  const text = `WITH n AS (SELECT coalesce($1::bigint, ${c.d.nowMs}) AS now),
    ins AS (
      INSERT INTO ${T} (id, queue, idempotency_key, type, payload, priority, k1, k2, run_at, deadline_at, created_at, status, staged,
        lane_key, provider_key, account_id, tenant_id, concurrency_key, version, attempts, max_attempts, idempotent, poll_errors,
        cancel_requested, updated_at, history_limit)
      SELECT u.id, $2, NULL, u.type, u.payload, u.priority,
        CASE WHEN $3::bigint > 0 THEN (n.now + u.delay) - u.priority::bigint * $3::bigint ELSE -u.priority::bigint END,
        -u.priority::bigint, n.now + u.delay, n.now + u.timeout, n.now, 'PENDING_SUBMIT',
        CASE WHEN u.delay <= 0 THEN 0 ELSE 1 END,
        u.lane, u.provider, u.account, u.tenant, u.ckey, 1, 0, u.max_attempts, u.idempotent, 0, 0, n.now, ${Math.trunc(c.historyLimit)}
      FROM n, unnest($4::varchar[], $5::varchar[], $6::text[], $7::integer[], $8::bigint[], $9::bigint[], $10::varchar[],
        $11::varchar[], $12::varchar[], $13::varchar[], $14::varchar[], $15::integer[], $16::smallint[])
        WITH ORDINALITY AS u(id, type, payload, priority, delay, timeout, lane, provider, account, tenant, ckey, max_attempts, idempotent, ord)
      ORDER BY u.ord
      RETURNING id, seq, created_at, k1, k2, run_at, priority)${marks}
    SELECT id, seq, created_at, (SELECT pg_notify($17, '') WHERE $18::boolean) AS notified FROM ins ORDER BY seq`;
  const values: unknown[] = [
    c.clock ? c.clock.now() : null,
    c.queue,
    c.aging,
    tasks.map((t) => t.id),
    tasks.map((t) => t.type),
    payloads,
    tasks.map((t) => t.priority),
    tasks.map((t) => t.delayMs),
    tasks.map((t) => t.timeoutMs),
    laneIds,
    tasks.map((t) => t.providerKey),
    tasks.map((t) => t.accountId),
    tasks.map((t) => t.tenantId),
    tasks.map((t) => t.concurrencyKey),
    tasks.map((t) => t.maxAttempts),
    tasks.map((t) => (t.idempotent ? 1 : 0)),
    c.channel,
    notify,
    [...lanes.keys()],
    marked.map((t) => t.providerKey),
    marked.map((t) => t.accountId),
    marked.map((t) => t.tenantId),
    marked.map((t) => t.concurrencyKey),
    marked.map((t) => t.id),
  ];
  const rows = await c.pg!.rows(text, values);
  if (rows.length !== tasks.length) throw new Error(`create: ${rows.length} rows inserted for ${tasks.length} tasks`);
  return { seqs: new Map(rows.map((r) => [String(r.id), Number(r.seq)])), now: Number(rows[0].created_at) };
}
