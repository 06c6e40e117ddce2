import { randomUUID } from 'node:crypto';
import { compareOrder } from '../../core/order-key';
import { TaskStatus, type Task } from '../../core/task';
import type { ClaimRequest, SubmissionClaim } from '../../core/task-store.port';
import { selectClaims } from './claim-loop';
import type { StoreContext } from './context';
import type { Exec, Row } from './db';
import { numOrNull, rowToTask, TASK_COLUMNS } from './rows';
import { laneTasks, writeLanesSql, type LaneState } from './sql/lanes';
import { markClaimedSql } from './sql/mark-claimed';
import { resourceFromRow, writeResourcesSql, type Resource } from './sql/resources';
import type { Sql } from './sql/sql';

interface PgResult {
  rows: Row[];
}
interface PgClient {
  query(text: string): Promise<PgResult | PgResult[]>;
  escapeLiteral(s: string): string;
}

const LANE_COLUMNS =
  'lane_key, provider_key, account_id, tenant_id, concurrency_key, h_priority, h_run_at, h_created_at, h_seq, parked_on, parked_until';
const LANE_ORDER = 'h1, h2, h_run_at, h_created_at, h_seq';
const LIVE_ROW_ORDER = 'k1, k2, run_at, created_at, seq';

/**
 * claimSubmissions on PostgreSQL in THREE round trips (the same steps and the same selection
 * loop as claim-submissions.ts, batched with the simple-query protocol, values inlined as
 * escaped literals):
 *   1. BEGIN; pg_advisory_xact_lock(queue); now
 *   2. timeouts; releases -> counters and unparking (one data-modifying CTE); rate unparking;
 *      staged merge -> lane heads (one CTE: UPDATE ... RETURNING, DISTINCT ON lane, upsert
 *      only where the new head is better); the first page of ready lanes; the resources they
 *      read; the head tasks of the best lane (FOR UPDATE)
 *   3. lanes, counters, claimed rows; next wake-up; COMMIT
 * plus one round trip per further lane whose tasks are needed, or per further page.
 * The queue lock is held from 1 to 3 only.
 */
export async function claimSubmissionsPg(c: StoreContext, req: ClaimRequest): Promise<SubmissionClaim> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await claimOnce(c, req);
    } catch (e) {
      if (attempt >= 5 || !c.d.isRetryable(e)) throw e;
    }
  }
}

async function claimOnce(c: StoreContext, req: ClaimRequest): Promise<SubmissionClaim> {
  const qr = c.db.dataSource.createQueryRunner();
  const client = (await qr.connect()) as PgClient;
  const lit = (v: unknown): string => {
    if (v === null || v === undefined) return 'NULL';
    if (typeof v === 'number') {
      if (!Number.isFinite(v)) throw new Error(`not a finite number: ${v}`);
      return String(v);
    }
    return client.escapeLiteral(String(v));
  };
  const inline = (s: Sql): string => {
    const parts = s.text.split('?');
    if (parts.length - 1 !== s.params.length) throw new Error('placeholder count mismatch');
    return parts.reduce((acc, p, i) => acc + lit(s.params[i - 1]) + p);
  };
  const many = async (statements: string[]): Promise<PgResult[]> => {
    const r = await client.query(statements.join(';\n'));
    return Array.isArray(r) ? r : [r];
  };
  const exec: Exec = {
    rows: async <T>(text: string, params: readonly unknown[] = []) =>
      ((await qr.query(c.d.placeholders(text), params as unknown[], true)) as { records: T[] }).records,
    run: async (text, params = []) => ((await qr.query(c.d.placeholders(text), params as unknown[], true)) as { affected?: number }).affected ?? 0,
  };
  let open = false;
  try {
    const [a, b] = c.db.lockKeys;
    const first = await many(['BEGIN', `SELECT pg_advisory_xact_lock(${a}, ${b})`, `SELECT ${c.d.nowMs} AS now`]);
    open = true;
    const now = c.clock ? c.clock.now() : Number(first[2].rows[0].now);
    const N = lit(now);
    const Q = lit(c.queue);
    const { tasks: T, lanes: L, releases: R, resources: S } = c.t;
    const pageSize = Math.max(32, req.limit * 2);
    const readyPage = (size: number) =>
      `SELECT ${LANE_COLUMNS} FROM ${L} WHERE queue = ${Q} AND ready = 1 ORDER BY ${LANE_ORDER} LIMIT ${size}`;
    const resourcesOfPage = (size: number) => `SELECT rkey, in_use, tat, configured, limit_value, paused, qps, burst, account_concurrency
      FROM ${S} WHERE queue = ${Q} AND rkey IN (
        SELECT unnest(ARRAY['p:' || provider_key,
          CASE WHEN account_id IS NOT NULL THEN 'a:' || provider_key || chr(31) || account_id END,
          CASE WHEN tenant_id IS NOT NULL THEN 't:' || tenant_id END,
          CASE WHEN tenant_id IS NOT NULL THEN 'd:' END,
          CASE WHEN concurrency_key IS NOT NULL THEN 'c:' || concurrency_key END])
        FROM (SELECT provider_key, account_id, tenant_id, concurrency_key FROM ${L}
          WHERE queue = ${Q} AND ready = 1 ORDER BY ${LANE_ORDER} LIMIT ${size}) p)`;
    const prefetchN = req.limit + 1;
    const prep = await many([
      // 1. due candidates past their deadline
      `UPDATE ${T} SET status = 'TIMED_OUT', staged = 0, version = version + 1, updated_at = ${N}, finished_at = ${N},
         error = 'deadline passed before submit'
       WHERE seq IN (SELECT seq FROM ${T} WHERE queue = ${Q} AND status = 'PENDING_SUBMIT' AND deadline_at IS NOT NULL
         AND deadline_at <= ${N} AND run_at <= ${N} FOR UPDATE)
       RETURNING ${TASK_COLUMNS}`,
      // 2. releases: counters down, lanes parked on those resources back to ready
      `WITH d AS (DELETE FROM ${R} WHERE id IN (SELECT id FROM ${R} WHERE queue = ${Q} ORDER BY id LIMIT 10000) RETURNING lane_key),
       k AS (SELECT x.rkey, count(*) AS n FROM d JOIN ${L} l ON l.queue = ${Q} AND l.lane_key = d.lane_key
         CROSS JOIN LATERAL (VALUES
           (CASE WHEN l.account_id IS NOT NULL THEN 'a:' || l.provider_key || chr(31) || l.account_id END),
           (CASE WHEN l.tenant_id IS NOT NULL THEN 't:' || l.tenant_id END),
           (CASE WHEN l.concurrency_key IS NOT NULL THEN 'c:' || l.concurrency_key END)) x(rkey)
         WHERE x.rkey IS NOT NULL GROUP BY x.rkey),
       s AS (UPDATE ${S} r SET in_use = GREATEST(0, r.in_use - k.n) FROM k WHERE r.queue = ${Q} AND r.rkey = k.rkey RETURNING r.rkey),
       u AS (UPDATE ${L} SET parked_on = NULL, ready = CASE WHEN h_seq IS NULL OR parked_until IS NOT NULL THEN 0 ELSE 1 END
         WHERE queue = ${Q} AND parked_on IN (SELECT rkey FROM k) RETURNING lane_key)
       SELECT (SELECT count(*) FROM s) AS counters, (SELECT count(*) FROM u) AS unparked`,
      // 3. rate tokens due
      `UPDATE ${L} SET parked_until = NULL, ready = CASE WHEN h_seq IS NULL OR parked_on IS NOT NULL THEN 0 ELSE 1 END
       WHERE queue = ${Q} AND parked_until IS NOT NULL AND parked_until <= ${N}`,
      // 4. merge due staged tasks: a lane's head changes only when the best merged task is better
      `WITH m AS (UPDATE ${T} SET staged = 0
         WHERE seq IN (SELECT seq FROM ${T} WHERE queue = ${Q} AND status = 'PENDING_SUBMIT' AND staged = 1 AND run_at <= ${N} FOR UPDATE)
         RETURNING lane_key, provider_key, account_id, tenant_id, concurrency_key, k1, k2, run_at, created_at, seq, priority),
       b AS (SELECT DISTINCT ON (lane_key) * FROM m ORDER BY lane_key, ${LIVE_ROW_ORDER})
       INSERT INTO ${L} AS l (queue, lane_key, provider_key, account_id, tenant_id, concurrency_key, ready,
         h1, h2, h_run_at, h_created_at, h_seq, h_priority, parked_on, parked_until)
       SELECT ${Q}, lane_key, provider_key, account_id, tenant_id, concurrency_key, 1, k1, k2, run_at, created_at, seq, priority, NULL, NULL FROM b
       ON CONFLICT (queue, lane_key) DO UPDATE SET h1 = excluded.h1, h2 = excluded.h2, h_run_at = excluded.h_run_at,
         h_created_at = excluded.h_created_at, h_seq = excluded.h_seq, h_priority = excluded.h_priority,
         ready = CASE WHEN l.parked_on IS NULL AND l.parked_until IS NULL THEN 1 ELSE 0 END
       WHERE l.h_seq IS NULL OR (excluded.h1, excluded.h2, excluded.h_run_at, excluded.h_created_at, excluded.h_seq)
         < (l.h1, l.h2, l.h_run_at, l.h_created_at, l.h_seq)`,
      // 5. first page of ready lanes, the resources they read, the head tasks of the best one
      readyPage(pageSize),
      resourcesOfPage(pageSize),
      `SELECT ${TASK_COLUMNS} FROM ${T} WHERE queue = ${Q} AND status = 'PENDING_SUBMIT' AND staged = 0
         AND lane_key = (SELECT lane_key FROM ${L} WHERE queue = ${Q} AND ready = 1 ORDER BY ${LANE_ORDER} LIMIT 1)
       ORDER BY ${LIVE_ROW_ORDER} LIMIT ${prefetchN} FOR UPDATE`,
    ]);
    const timedOut = prep[0].rows.map(rowToTask).sort((x, y) => compareOrder(x, y, c.aging));
    const resources = new Map<string, Resource>();
    const absorb = (rows: Row[], keysOfPage: Row[]) => {
      for (const r of rows) resources.set(String(r.rkey), resourceFromRow(r));
      for (const l of keysOfPage) for (const k of pageKeys(l)) if (!resources.has(k)) resources.set(k, { ...emptyRes(k) });
    };
    let firstPage: Row[] | null = prep[4].rows;
    absorb(prep[5].rows, firstPage);
    const prefetched = prep[6].rows;
    const prefetchLane = prefetched.length > 0 ? String(prefetched[0].lane_key) : null;
    let prefetchUsed = false;

    const lanes = new Map<string, LaneState>();
    const claimed = await selectClaims(
      {
        async page(size, changed) {
          if (firstPage && size === pageSize) {
            const p = firstPage;
            firstPage = null;
            return p;
          }
          const res = await many([...writeLanesSql(c, changed).map(inline), readyPage(size), resourcesOfPage(size)]);
          const page = res[res.length - 2].rows;
          absorb(res[res.length - 1].rows, page);
          return page;
        },
        async laneTasks(laneKey, n) {
          if (!prefetchUsed && laneKey === prefetchLane && prefetched.length >= Math.min(n, prefetchN)) {
            prefetchUsed = true;
            if (prefetched.length >= n || prefetched.length === prefetchN) return prefetched;
          }
          return laneTasks(exec, c, laneKey, n);
        },
      },
      req.limit,
      now,
      c.aging,
      lanes,
      resources,
    );
    const batchId = randomUUID();
    const leaseUntil = now + req.leaseMs;
    const wantWake = claimed.length < req.limit;
    const fin = await many([
      ...writeLanesSql(c, lanes.values()).map(inline),
      ...writeResourcesSql(c, resources.values(), true).map(inline),
      ...markClaimedSql(c, claimed.map((r) => Number(r.seq)), req.owner, batchId, leaseUntil, now).map(inline),
      ...(wantWake
        ? [
            `SELECT LEAST((SELECT MIN(run_at) FROM ${T} WHERE queue = ${Q} AND status = 'PENDING_SUBMIT' AND staged = 1),
               (SELECT MIN(parked_until) FROM ${L} WHERE queue = ${Q} AND parked_until IS NOT NULL)) AS m`,
          ]
        : []),
      'COMMIT',
    ]);
    open = false;
    const nextWakeAt = wantWake ? numOrNull(fin[fin.length - 2].rows[0]?.m) : null;
    const tasks: Task[] = claimed.map((r) => ({
      ...rowToTask(r),
      status: TaskStatus.SUBMITTING,
      leaseOwner: req.owner,
      leaseId: `${batchId}:${String(r.id)}`,
      leaseUntil,
      version: Number(r.version) + 1,
      updatedAt: now,
    }));
    return { claimed: tasks, timedOut, nextWakeAt };
  } catch (e) {
    if (open) await client.query('ROLLBACK').catch(() => undefined);
    throw e;
  } finally {
    await qr.release();
  }
}

function pageKeys(l: Row): string[] {
  const keys = [`p:${String(l.provider_key)}`];
  if (l.account_id !== null) keys.push(`a:${String(l.provider_key)}\u001f${String(l.account_id)}`);
  if (l.tenant_id !== null) keys.push(`t:${String(l.tenant_id)}`, 'd:');
  if (l.concurrency_key !== null) keys.push(`c:${String(l.concurrency_key)}`);
  return keys;
}

function emptyRes(rkey: string): Resource {
  return { rkey, inUse: 0, tat: 0, configured: false, limit: null, paused: false, qps: null, burst: null, accountConcurrency: null, dirty: false };
}
