import { historyError, historyKeepsError, statusOfCode, withCreation, type TaskHistoryEntry } from '../../core/history';
import { ALL_STATUSES } from '../../core/task';
import { ERROR, type TaskTable } from './task-table';

/** Numbers per slot: the task's seq (whose history this is), entries kept, entries ever written, two inline entries (at, code). */
const W = 7;
const SEQ = 0;
const KEPT = 1;
const TOTAL = 2;
const INLINE = 3;
const PAGE_SHIFT = 12;
const PAGE = 1 << PAGE_SHIFT;
const MASK = PAGE - 1;

/** KEEPS[from * 16 + to]: whether the entry keeps the task's error (core/history.ts). */
const KEEPS: boolean[] = [];
for (const [i, from] of ALL_STATUSES.entries()) for (const [j, to] of ALL_STATUSES.entries()) KEEPS[i * 16 + j] = historyKeepsError(from, to);

/**
 * The memory store's per-task history (core/history.ts), beside the task table and in the same
 * shape: typed-array pages with one record per slot, so recording a transition allocates nothing
 * and leaves nothing for the garbage collector (a drained task has two transitions: both fit
 * the record). An entry is (at, version * 256 + from * 16 + to) with the status codes of
 * task-table.ts; entries beyond the first two kept go to a small array per task, the rare error
 * texts to a map, both keyed by the task's seq and dropped with it (drop()). A record belongs to
 * the task whose seq it holds: a reused slot starts empty. The creation is not stored
 * (withCreation adds it on read).
 */
export class HistoryLog {
  private readonly pages: Float64Array[] = [];
  /** seq -> entries kept beyond the first two, oldest first, (at, code) pairs. */
  private readonly more = new Map<number, number[]>();
  /** seq -> (ordinal of the entry among all written -> its error). */
  private readonly errors = new Map<number, Map<number, string>>();

  constructor(
    private readonly t: TaskTable,
    /** Transitions kept per task (> 0). */
    readonly limit: number,
  ) {}

  /** The transition of slot `s` (task `seq`) from status code `from` to `to` at `at`, now at `version`. */
  record(s: number, seq: number, from: number, to: number, at: number, version: number): void {
    const page = this.page(s);
    const o = (s & MASK) * W;
    if (page[o + SEQ] !== seq) {
      page[o + SEQ] = seq;
      page[o + KEPT] = 0;
      page[o + TOTAL] = 0;
    }
    const kept = page[o + KEPT];
    const code = version * 256 + from * 16 + to;
    if (kept < 2) {
      page[o + INLINE + 2 * kept] = at;
      page[o + INLINE + 2 * kept + 1] = code;
    } else {
      let m = this.more.get(seq);
      if (m === undefined) this.more.set(seq, (m = []));
      m.push(at, code);
    }
    const ordinal = page[o + TOTAL];
    page[o + KEPT] = kept + 1;
    page[o + TOTAL] = ordinal + 1;
    if (KEEPS[from * 16 + to]) {
      const error = historyError(this.t.ref<string | null>(s, ERROR));
      if (error !== undefined) {
        let e = this.errors.get(seq);
        if (e === undefined) this.errors.set(seq, (e = new Map()));
        e.set(ordinal, error);
      }
    }
    if (kept + 1 > this.limit) this.dropOldest(page, o, seq);
  }

  /** The entries of slot `s` (task `seq`), oldest first, with the creation while it is among the last `limit`. */
  read(s: number, seq: number, createdAt: number): TaskHistoryEntry[] {
    const page = this.pages[s >> PAGE_SHIFT];
    const o = (s & MASK) * W;
    const stored: TaskHistoryEntry[] = [];
    if (page !== undefined && page[o + SEQ] === seq) {
      const kept = page[o + KEPT];
      const first = page[o + TOTAL] - kept;
      const m = this.more.get(seq) ?? [];
      const errs = this.errors.get(seq);
      for (let i = 0; i < kept; i++) {
        const at = i < 2 ? page[o + INLINE + 2 * i] : m[2 * (i - 2)];
        const code = i < 2 ? page[o + INLINE + 2 * i + 1] : m[2 * (i - 2) + 1];
        const e: TaskHistoryEntry = { at, from: statusOfCode(Math.floor(code / 16) % 16), to: statusOfCode(code % 16), version: Math.floor(code / 256) };
        const error = errs?.get(first + i);
        if (error !== undefined) e.error = error;
        stored.push(e);
      }
    }
    return withCreation({ createdAt }, stored, this.limit);
  }

  /** The task `seq` is gone (purge): its entries beyond the record go too. */
  drop(seq: number): void {
    this.more.delete(seq);
    this.errors.delete(seq);
  }

  private dropOldest(page: Float64Array, o: number, seq: number): void {
    const m = this.more.get(seq);
    page[o + INLINE] = page[o + INLINE + 2];
    page[o + INLINE + 1] = page[o + INLINE + 3];
    if (m !== undefined && m.length > 0) {
      page[o + INLINE + 2] = m[0];
      page[o + INLINE + 3] = m[1];
      m.splice(0, 2);
      if (m.length === 0) this.more.delete(seq);
    }
    page[o + KEPT] -= 1;
    const errs = this.errors.get(seq);
    if (errs !== undefined) {
      errs.delete(page[o + TOTAL] - page[o + KEPT] - 1);
      if (errs.size === 0) this.errors.delete(seq);
    }
  }

  private page(s: number): Float64Array {
    const i = s >> PAGE_SHIFT;
    while (this.pages.length <= i) this.pages.push(new Float64Array(PAGE * W));
    return this.pages[i];
  }
}
