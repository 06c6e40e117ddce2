import { ValidationError } from './errors';
import { Messages } from './messages';
import { compareOrder, type OrderFields } from './order-key';
import { TaskStatus, type Task } from './task';

/**
 * TaskStore.query: tasks of one status with filters, paged by an opaque cursor.
 *
 * Order: PENDING_SUBMIT tasks as the queue will take them: the due ones (runAt <= the store's
 * now) in the order of DESIGN §2 (core/order-key.ts; admission aside), then the not-yet-due ones
 * by runAt, then seq. Every other status newest first (seq descending).
 *
 * A page holds at most `limit` tasks. A store may stop a page early when its scan budget runs
 * out (filters that no index serves): fewer tasks with a non-null `nextCursor` then mean "go on
 * with the cursor"; only `nextCursor: null` means the end. Pages are not a snapshot: a task that
 * changes between two pages may be missed or seen twice, as with any keyset paging.
 */
export interface TaskQuery {
  status: TaskStatus | `${TaskStatus}`;
  type?: string;
  tenantId?: string;
  providerKey?: string;
  accountId?: string;
  /** Inclusive bounds of priority. */
  minPriority?: number;
  maxPriority?: number;
  /** An exact task id or idempotency key: the page holds that task (when the other filters match). */
  search?: string;
  /** 1..MAX_QUERY_LIMIT. */
  limit: number;
  /** nextCursor of the previous page of the same query; absent / null = first page. */
  cursor?: string | null;
}

export interface TaskPage {
  tasks: Task[];
  nextCursor: string | null;
}

export const MAX_QUERY_LIMIT = 500;

/**
 * Where a page ends, decoded from the cursor:
 * - `due`: PENDING_SUBMIT in DESIGN §2 order, after the task with these order fields;
 * - `later`: PENDING_SUBMIT not yet due, after (runAt, seq);
 * - `seq`: other statuses, before this seq.
 */
export type QueryPosition =
  | { phase: 'due'; after: OrderFields }
  | { phase: 'later'; runAt: number; seq: number }
  | { phase: 'seq'; before: number };

/** A validated TaskQuery with its cursor decoded (null = from the start). */
export interface ResolvedTaskQuery extends Omit<TaskQuery, 'cursor' | 'status'> {
  status: TaskStatus;
  position: QueryPosition | null;
}

export function encodeCursor(status: TaskStatus, p: QueryPosition): string {
  const body =
    p.phase === 'due'
      ? ['d', p.after.priority, p.after.runAt, p.after.createdAt, p.after.seq, ...(p.after.fairTag == null ? [] : [p.after.fairTag])]
      : p.phase === 'later'
        ? ['l', p.runAt, p.seq]
        : ['s', p.before];
  return Buffer.from(JSON.stringify([status, ...body]), 'utf8').toString('base64url');
}

/** The position of a cursor of `status`; ValidationError when it is not one. */
export function decodeCursor(status: TaskStatus, cursor: string): QueryPosition {
  let v: unknown;
  try {
    v = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw new ValidationError(Messages.badCursor(), ['cursor']);
  }
  const ok = (xs: unknown[]) => xs.every((x) => Number.isSafeInteger(x));
  if (Array.isArray(v) && v[0] === status) {
    if (v[1] === 'd' && v.length === 6 && ok(v.slice(2))) {
      return { phase: 'due', after: { priority: v[2], runAt: v[3], createdAt: v[4], seq: v[5] } };
    }
    // with fair share (DESIGN §7) the task's fair tag too, a decimal string
    if (v[1] === 'd' && v.length === 7 && ok(v.slice(2, 6)) && typeof v[6] === 'string' && /^(0|[1-9][0-9]{0,18})$/.test(v[6])) {
      return { phase: 'due', after: { priority: v[2], runAt: v[3], createdAt: v[4], seq: v[5], fairTag: v[6] } };
    }
    if (v[1] === 'l' && v.length === 4 && ok(v.slice(2))) return { phase: 'later', runAt: v[2], seq: v[3] };
    if (v[1] === 's' && v.length === 3 && ok(v.slice(2)) && status !== TaskStatus.PENDING_SUBMIT) return { phase: 'seq', before: v[2] };
  }
  throw new ValidationError(Messages.badCursor(), ['cursor']);
}

/** Whether a task passes the filters of a query (status, search excluded). */
export function matchesQuery(t: Task, q: ResolvedTaskQuery): boolean {
  return (
    (q.type === undefined || t.type === q.type) &&
    (q.tenantId === undefined || t.tenantId === q.tenantId) &&
    (q.providerKey === undefined || t.providerKey === q.providerKey) &&
    (q.accountId === undefined || t.accountId === q.accountId) &&
    (q.minPriority === undefined || t.priority >= q.minPriority) &&
    (q.maxPriority === undefined || t.priority <= q.maxPriority)
  );
}

/**
 * The page of a `search` query: the task with that id and the task with that idempotency key
 * (at most two, in the query's order), kept when they have the status and match the filters.
 */
export function searchPage(found: ReadonlyArray<Task | null>, q: ResolvedTaskQuery, now: number, agingIntervalMs: number): TaskPage {
  const seen = new Set<string>();
  const tasks: Task[] = [];
  for (const t of found) {
    if (t === null || seen.has(t.id) || t.status !== q.status || !matchesQuery(t, q)) continue;
    seen.add(t.id);
    tasks.push(t);
  }
  tasks.sort((a, b) => compareListed(a, b, q.status, now, agingIntervalMs));
  return { tasks: tasks.slice(0, q.limit), nextCursor: null };
}

/** Negative when a is listed before b in a query of `status` at store time `now`. */
export function compareListed(a: Task, b: Task, status: TaskStatus, now: number, agingIntervalMs: number): number {
  if (status !== TaskStatus.PENDING_SUBMIT) return b.seq - a.seq;
  const da = a.runAt <= now;
  const db = b.runAt <= now;
  if (da !== db) return da ? -1 : 1;
  if (da) return compareOrder(a, b, agingIntervalMs);
  return a.runAt !== b.runAt ? a.runAt - b.runAt : a.seq - b.seq;
}

/** The position right after `t` in a query of `status` at store time `now`. */
export function positionAfter(t: Task, status: TaskStatus, now: number): QueryPosition {
  if (status !== TaskStatus.PENDING_SUBMIT) return { phase: 'seq', before: t.seq };
  if (t.runAt <= now) {
    const after: OrderFields = { priority: t.priority, runAt: t.runAt, createdAt: t.createdAt, seq: t.seq };
    if (t.fairTag != null) after.fairTag = t.fairTag; // DESIGN §7: the tag is part of the order
    return { phase: 'due', after };
  }
  return { phase: 'later', runAt: t.runAt, seq: t.seq };
}
