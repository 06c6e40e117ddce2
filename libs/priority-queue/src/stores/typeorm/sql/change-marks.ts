import { q, type StoreContext } from '../context';
import { num } from '../rows';
import { raw, sql } from './sql';
import { usesStageMarks } from './stage-marks';

/** What a claim of this queue could newly find, as one probe read (ChangeWatcher). */
export interface ChangeMarks {
  /** Highest task seq of the tables (any queue): a create anywhere moves it. */
  seq: number;
  /** Highest id in `releases` of the queue: a finished task that gave slots back moves it. */
  release: number;
  /** A lane of the queue is ready (setLimits unparked it, or a claim left it for later). */
  ready: boolean;
  /** A poll or a cancel request of the queue is due and free of a lease. */
  poll: boolean;
  /**
   * A staged task of the queue is due (a retry, a requeue, a recovered or re-prioritised task,
   * a delayed one whose time came): no claim merged it into its lane yet.
   */
  staged: boolean;
}

/**
 * The change probe of MySQL / MariaDB and SQLite (no LISTEN/NOTIFY): one autocommit statement
 * of six index lookups, no transaction, no locks (consistent reads): max(seq) of the primary
 * key, max(id) of releases (queue, id), any ready lane (lanes ready index), any due poll
 * (poll index) and any cancel request (cancel index) without a live lease, any due staged task
 * (SQLite: the staged index; MySQL / MariaDB: a due stage mark, stage-marks.ts). Costs the same
 * whatever the backlog.
 */
export async function readChangeMarks(c: StoreContext): Promise<ChangeMarks> {
  const T = raw(c.t.tasks);
  const now = c.nowSql();
  const free = sql`(lease_until IS NULL OR lease_until <= ${now})`;
  const staged = usesStageMarks(c)
    ? sql`EXISTS (SELECT 1 FROM ${raw(c.t.stageMarks)} WHERE queue = ${c.queue} AND run_at <= ${now})`
    : sql`EXISTS (SELECT 1 FROM ${T} WHERE status = 'PENDING_SUBMIT' AND staged = 1 AND queue = ${c.queue} AND run_at <= ${now})`;
  const [r] = await q<Record<string, unknown>>(
    c.db,
    sql`SELECT (SELECT MAX(seq) FROM ${T}) AS s,
      (SELECT MAX(id) FROM ${raw(c.t.releases)} WHERE queue = ${c.queue}) AS r,
      EXISTS (SELECT 1 FROM ${raw(c.t.lanes)} WHERE queue = ${c.queue} AND ready = 1) AS l,
      EXISTS (SELECT 1 FROM ${T} WHERE status IN ('SUBMITTED', 'RUNNING') AND queue = ${c.queue} AND next_poll_at <= ${now} AND ${free}) AS p,
      EXISTS (SELECT 1 FROM ${T} WHERE cancel_requested = 1 AND status IN ('SUBMITTED', 'RUNNING') AND queue = ${c.queue} AND ${free}) AS x,
      ${staged} AS g`,
  );
  const yes = (v: unknown) => v === true || Number(v) === 1;
  return { seq: num(r?.s ?? 0), release: num(r?.r ?? 0), ready: yes(r?.l), poll: yes(r?.p) || yes(r?.x), staged: yes(r?.g) };
}
