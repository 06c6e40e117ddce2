import { compareOrder, type OrderFields } from '../../core/order-key';
import { TaskStatus } from '../../core/task';
import { encodeCursor, type ResolvedTaskQuery } from '../../core/task-query';
import type { BucketQueue } from './bucket-queue';
import type { OrderMode } from './order-mode';
import type { StatusIndex } from './status-index';
import { CREATED_AT, KEYS, PRIORITY, RUN_AT, STATUS_CODE, TYPE, type LaneKeys, type TaskTable } from './task-table';

/**
 * Reads of the memory store that walk the tasks of one status (query pages, explain's `ahead`)
 * instead of keeping one more index on every write: the status index (status-index.ts) gives a
 * status's slots, the fields are read from the task table's typed arrays. A page of a status
 * costs one pass over that status's tasks at most (PENDING_SUBMIT: always one pass, keeping the
 * best `limit + 1` in a small heap): about 10 ms per million tasks, no allocation per task.
 */
export interface ScanContext {
  readonly t: TaskTable;
  readonly statusIndex: StatusIndex;
  readonly order: OrderMode;
  readonly agingIntervalMs: number;
  /** The due PENDING_SUBMIT tasks per priority, by (runAt, seq) (pending-stats.ts buckets); current as of `now`. */
  readonly buckets: ReadonlyMap<number, { readonly queue: BucketQueue }>;
  /** Whether the store has fair share (DESIGN §7): the fair tag follows the priority in the order. */
  readonly fair: boolean;
  /** The fair tag of a slot as an exact number (policy-state.ts tagNumber; 0 without fairness). */
  tagOf(s: number): number;
}

/** DESIGN §2 order of two slots (negative: a first); the inline keys of order-mode.ts, then createdAt, seq. */
function compareSlots(c: ScanContext, a: number, b: number): number {
  const t = c.t;
  return compareKeys(c, t.int(a, PRIORITY), t.num(a, RUN_AT), t.num(a, CREATED_AT), t.seq(a), c.tagOf(a), t.int(b, PRIORITY), t.num(b, RUN_AT), t.num(b, CREATED_AT), t.seq(b), c.tagOf(b));
}

function compareKeys(c: ScanContext, pa: number, ra: number, ca: number, sa: number, ta: number, pb: number, rb: number, cb: number, sb: number, tb: number): number {
  const o = c.order;
  if (!o.usesRank) return compareOrder({ priority: pa, runAt: ra, createdAt: ca, seq: sa }, { priority: pb, runAt: rb, createdAt: cb, seq: sb }, c.agingIntervalMs);
  let d = o.k1(pa, ra, ta) - o.k1(pb, rb, tb);
  if (d === 0) d = o.k2(pa, ra, ta) - o.k2(pb, rb, tb);
  if (d === 0) d = o.k3(pa, ra, ta) - o.k3(pb, rb, tb);
  if (d === 0) d = ca - cb;
  if (d === 0) d = sa - sb;
  return d;
}

function compareToFields(c: ScanContext, s: number, f: OrderFields): number {
  const t = c.t;
  return compareKeys(c, t.int(s, PRIORITY), t.num(s, RUN_AT), t.num(s, CREATED_AT), t.seq(s), c.tagOf(s), f.priority, f.runAt, f.createdAt, f.seq, f.fairTag == null ? 0 : Number(f.fairTag));
}

/** Listed order of two PENDING_SUBMIT slots at `now`: due ones by DESIGN §2, then the rest by (runAt, seq). */
function comparePending(c: ScanContext, a: number, b: number, now: number): number {
  const t = c.t;
  const ra = t.num(a, RUN_AT);
  const rb = t.num(b, RUN_AT);
  const da = ra <= now;
  if (da !== rb <= now) return da ? -1 : 1;
  if (da) return compareSlots(c, a, b);
  return ra !== rb ? ra - rb : t.seq(a) - t.seq(b);
}

function matches(c: ScanContext, s: number, q: ResolvedTaskQuery): boolean {
  const t = c.t;
  if (q.type !== undefined && t.ref<string>(s, TYPE) !== q.type) return false;
  if (q.providerKey !== undefined || q.accountId !== undefined || q.tenantId !== undefined) {
    const k = t.ref<LaneKeys>(s, KEYS);
    if (q.providerKey !== undefined && k.providerKey !== q.providerKey) return false;
    if (q.accountId !== undefined && k.accountId !== q.accountId) return false;
    if (q.tenantId !== undefined && k.tenantId !== q.tenantId) return false;
  }
  if (q.minPriority !== undefined || q.maxPriority !== undefined) {
    const p = t.int(s, PRIORITY);
    if ((q.minPriority !== undefined && p < q.minPriority) || (q.maxPriority !== undefined && p > q.maxPriority)) return false;
  }
  return true;
}

/** Whether a PENDING_SUBMIT slot comes after the query's cursor. */
function afterCursor(c: ScanContext, s: number, q: ResolvedTaskQuery, now: number): boolean {
  const p = q.position;
  if (p === null) return true;
  const runAt = c.t.num(s, RUN_AT);
  if (p.phase === 'due') return runAt > now || compareToFields(c, s, p.after) > 0;
  if (p.phase === 'later') return runAt > now && (runAt > p.runAt || (runAt === p.runAt && c.t.seq(s) > p.seq));
  return false;
}

/**
 * Due tasks in DESIGN §2 order without aging (priority first) straight from the priority
 * buckets: priorities in descending order, each bucket from the cursor on, tasks of one runAt
 * sorted by (createdAt, seq). Appends to `out` up to `want`; true when every due task was seen.
 */
function dueFromBuckets(c: ScanContext, q: ResolvedTaskQuery, want: number, out: number[]): boolean {
  const t = c.t;
  const p = q.position?.phase === 'due' ? q.position.after : null;
  const priorities = [...c.buckets.keys()]
    .filter((x) => (p === null || x <= p.priority) && (q.minPriority === undefined || x >= q.minPriority) && (q.maxPriority === undefined || x <= q.maxPriority))
    .sort((a, b) => b - a);
  const group: number[] = [];
  const flush = (): boolean => {
    if (group.length > 1) group.sort((a, b) => t.num(a, CREATED_AT) - t.num(b, CREATED_AT) || t.seq(a) - t.seq(b));
    for (const s of group) {
      if (p !== null && compareToFields(c, s, p) <= 0) continue;
      if (!matches(c, s, q)) continue;
      out.push(s);
      if (out.length >= want) return false;
    }
    group.length = 0;
    return true;
  };
  for (const priority of priorities) {
    let groupRunAt = NaN;
    let more = true;
    const from = p !== null && priority === p.priority ? p.runAt : -Infinity;
    c.buckets.get(priority)!.queue.eachAfter(from, -Infinity, (s, runAt) => {
      if (runAt !== groupRunAt && group.length > 0 && !(more = flush())) return false;
      groupRunAt = runAt;
      group.push(s);
      return true;
    });
    if (more && group.length > 0) more = flush();
    if (!more) return false;
  }
  return true;
}

/** The slots of one page of `q` (at most limit + 1: the extra one says a next page exists), in listed order. */
export function queryPageSlots(c: ScanContext, q: ResolvedTaskQuery, now: number): number[] {
  const want = q.limit + 1;
  const sc = STATUS_CODE[q.status];
  if (q.status === TaskStatus.PENDING_SUBMIT && c.agingIntervalMs === 0 && !c.fair && (q.position === null || q.position.phase === 'due')) {
    const out: number[] = [];
    if (!dueFromBuckets(c, q, want, out)) return out;
    // every due task seen: the page goes on with the not-yet-due ones
    const later: ResolvedTaskQuery = { ...q, position: { phase: 'later', runAt: now, seq: Number.MAX_SAFE_INTEGER } };
    return out.concat(pendingByScan(c, later, now, want - out.length));
  }
  if (q.status === TaskStatus.PENDING_SUBMIT) return pendingByScan(c, q, now, want);
  const out: number[] = [];
  const before = q.position?.phase === 'seq' ? q.position.before : Infinity;
  c.statusIndex.eachDesc(sc, before, (s) => {
    if (matches(c, s, q)) out.push(s);
    return out.length < want;
  });
  return out;
}

/** Up to `want` pending slots after the cursor in listed order, by one pass over every pending task. */
function pendingByScan(c: ScanContext, q: ResolvedTaskQuery, now: number, want: number): number[] {
  const sc = STATUS_CODE[TaskStatus.PENDING_SUBMIT];
  // the best `want` pending slots after the cursor: a max-heap (worst on top) of at most `want`;
  // once it is full, a slot whose leading key is already worse than the top's is dropped after
  // reading two numbers (most slots of a big backlog)
  const heap: number[] = [];
  const worse = (a: number, b: number) => comparePending(c, a, b, now) > 0;
  const t = c.t;
  const k1 = c.order.k1;
  let topDue = false;
  let topK1 = 0;
  let topRunAt = 0;
  const noteTop = () => {
    const top = heap[0];
    topRunAt = t.num(top, RUN_AT);
    topDue = topRunAt <= now;
    topK1 = k1(t.int(top, PRIORITY), topRunAt, c.tagOf(top));
  };
  c.statusIndex.each(sc, (s) => {
    if (heap.length === want) {
      const runAt = t.num(s, RUN_AT);
      if (runAt <= now) {
        if (topDue && k1(t.int(s, PRIORITY), runAt, c.tagOf(s)) > topK1) return true;
      } else if (topDue || runAt > topRunAt) return true;
      if (!worse(heap[0], s)) return true;
    }
    if (!afterCursor(c, s, q, now) || !matches(c, s, q)) return true;
    if (heap.length < want) siftUp(heap, s, worse);
    else replaceTop(heap, s, worse);
    if (heap.length === want) noteTop();
    return true;
  });
  return heap.sort((a, b) => comparePending(c, a, b, now));
}

/** The page's nextCursor: after its last listed slot when the scan found one more. */
export function nextCursorOf(c: ScanContext, q: ResolvedTaskQuery, slots: readonly number[], now: number): string | null {
  if (slots.length <= q.limit) return null;
  const s = slots[q.limit - 1];
  const t = c.t;
  if (q.status !== TaskStatus.PENDING_SUBMIT) return encodeCursor(q.status, { phase: 'seq', before: t.seq(s) });
  const runAt = t.num(s, RUN_AT);
  if (runAt <= now) {
    const after = { priority: t.int(s, PRIORITY), runAt, createdAt: t.num(s, CREATED_AT), seq: t.seq(s) };
    return encodeCursor(q.status, { phase: 'due', after: c.fair ? { ...after, fairTag: String(c.tagOf(s)) } : after });
  }
  return encodeCursor(q.status, { phase: 'later', runAt, seq: t.seq(s) });
}

/**
 * Due PENDING_SUBMIT tasks ranked before slot `target` whose lane `admissible` accepts, counted
 * up to `cap` (one pass over the pending tasks, stopped at the cap).
 */
export function countAhead(c: ScanContext, target: number, now: number, admissible: (lane: LaneKeys) => boolean, cap: number): number {
  const t = c.t;
  if (c.agingIntervalMs === 0 && !c.fair) {
    // priority first: the buckets of higher priorities, then the target's own up to its runAt
    const tp = t.int(target, PRIORITY);
    const tr = t.num(target, RUN_AT);
    let n = 0;
    for (const priority of [...c.buckets.keys()].filter((x) => x >= tp).sort((a, b) => b - a)) {
      c.buckets.get(priority)!.queue.eachAfter(-Infinity, -Infinity, (s, runAt) => {
        if (priority === tp && (runAt > tr || (runAt === tr && compareSlots(c, s, target) >= 0))) return runAt <= tr;
        if (admissible(t.ref<LaneKeys>(s, KEYS))) n++;
        return n < cap;
      });
      if (n >= cap) break;
    }
    return n;
  }
  const k1 = c.order.k1;
  const targetK1 = k1(t.int(target, PRIORITY), t.num(target, RUN_AT), c.tagOf(target));
  let n = 0;
  c.statusIndex.each(STATUS_CODE[TaskStatus.PENDING_SUBMIT], (s) => {
    const runAt = t.num(s, RUN_AT);
    if (runAt > now || s === target) return true;
    // the leading key decides for most tasks of a big backlog (two numbers read)
    const d = k1(t.int(s, PRIORITY), runAt, c.tagOf(s)) - targetK1;
    if (d > 0 || (d === 0 && compareSlots(c, s, target) >= 0)) return true;
    if (admissible(t.ref<LaneKeys>(s, KEYS))) n++;
    return n < cap;
  });
  return n;
}

function siftUp(heap: number[], s: number, worse: (a: number, b: number) => boolean): void {
  let i = heap.length;
  heap.push(s);
  while (i > 0) {
    const p = (i - 1) >> 1;
    if (!worse(s, heap[p])) break;
    heap[i] = heap[p];
    i = p;
  }
  heap[i] = s;
}

function replaceTop(heap: number[], s: number, worse: (a: number, b: number) => boolean): void {
  const n = heap.length;
  let i = 0;
  for (;;) {
    let ch = 2 * i + 1;
    if (ch >= n) break;
    if (ch + 1 < n && worse(heap[ch + 1], heap[ch])) ch++;
    if (!worse(heap[ch], s)) break;
    heap[i] = heap[ch];
    i = ch;
  }
  heap[i] = s;
}
