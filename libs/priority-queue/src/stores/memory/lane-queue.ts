import { Q_TOK, type TaskTable } from './task-table';

/** Numbers per entry: k1, k2, k3, rank, token, slot (the order key as in lazy-heap.ts). */
const S = 6;
const TOKEN = 4;
const SLOT = 5;
/** Below this many entries the insert buffer is never merged into the run. */
const MIN_MERGE = 16;
/** The buffer is merged once it holds more than 1 / MERGE_RATIO of the run's entries. */
const MERGE_RATIO = 8;
/**
 * No merge makes a run longer than this many entries (a merge copies the run: at most a few ms),
 * so one operation never stalls the process for long; a lane with more due tasks keeps the rest
 * in the heap, which then works as a plain heap until the run drains.
 */
const MAX_MERGE = 1 << 15;

const NONE = 0;
const FROM_RUN = 1;
const FROM_BUF = 2;

/**
 * The due tasks of one lane in order: a sorted run (an array, read from the front) plus a small
 * 4-ary heap of tasks that came after the run was built; the head is the better of the two
 * fronts. Taking the head from the run reads the next entry of one array, which is in cache or
 * next to it, where a heap of thousands of entries would sift through a cache miss per level
 * (most claims at a million pending). The buffer is merged into a new run once it holds more than
 * an eighth of the run (so each entry is moved a constant number of times, amortised) while the
 * result stays within MAX_MERGE entries (so no single push copies a huge run), and a
 * task that sorts after the run's last entry while the buffer is empty is appended to the run
 * (tasks of one priority arriving in order never enter the heap).
 *
 * Removal from the middle is lazy, as in lazy-heap.ts: an entry is live while its slot's Q_TOK
 * holds the entry's token; the owner changes the token and reports it (removeLive / noteRemoved).
 * Dead entries are dropped when they reach a front, and everything is rebuilt when they outnumber
 * live ones.
 */
export class LaneQueue {
  private run: number[] = [];
  /** Index (in numbers) of the run's first entry still held. */
  private pos = 0;
  private spare: number[] = [];
  /** 4-ary min-heap of entries. */
  private buf: number[] = [];
  private stale = 0;
  /** Where the head is: NONE, FROM_RUN or FROM_BUF (kept up to date by every change). */
  private src = NONE;
  /** Offset of the head's entry in its array. */
  private at = 0;

  constructor(
    private readonly table: TaskTable,
    /** Order of two slots whose inline keys and ranks do not decide (order-mode.ts tie). */
    private readonly tie: (a: number, b: number) => number,
  ) {}

  /** Entries held, dead ones included. */
  get length(): number {
    return (this.run.length - this.pos + this.buf.length) / S;
  }

  push(slot: number, k1: number, k2: number, token: number, k3 = 0, rank = 0): void {
    const run = this.run;
    const n = run.length;
    if (this.buf.length === 0 && (n === this.pos || this.after(k1, k2, k3, rank, slot, run, n - S))) {
      run.push(k1, k2, k3, rank, token, slot);
    } else {
      const buf = this.buf;
      buf.push(k1, k2, k3, rank, token, slot);
      this.siftUp(buf.length - S);
      const bufCount = buf.length / S;
      const runCount = (n - this.pos) / S;
      if (bufCount > MIN_MERGE && bufCount * MERGE_RATIO > runCount && bufCount + runCount <= MAX_MERGE) this.merge();
    }
    this.settle();
  }

  /** The head's slot (the best live entry), or undefined when the lane has no due task. */
  top(): number | undefined {
    if (this.src === NONE) return undefined;
    return (this.src === FROM_RUN ? this.run : this.buf)[this.at + SLOT];
  }

  topK1(): number {
    return this.head()[this.at];
  }

  topK2(): number {
    return this.head()[this.at + 1];
  }

  topK3(): number {
    return this.head()[this.at + 2];
  }

  topRank(): number {
    return this.head()[this.at + 3];
  }

  topToken(): number {
    return this.head()[this.at + TOKEN];
  }

  /** Removes the head; call after top() returned a slot. */
  pop(): void {
    this.dropHead();
    this.settle();
  }

  /** The owner changed the slot's token from `token`: drops the entry now when it is the head. */
  removeLive(slot: number, token: number): void {
    if (this.src !== NONE) {
      const a = this.head();
      if (a[this.at + SLOT] === slot && a[this.at + TOKEN] === token) {
        this.pop();
        return;
      }
    }
    this.noteRemoved();
  }

  /** The owner invalidated one live entry (changed its slot's token BEFORE this call). */
  noteRemoved(): void {
    this.stale++;
    if (this.stale > 32 && this.stale * 2 > this.length) this.merge(); // drops every dead entry
    this.settle();
  }

  /** Live slots in no particular order (for tests and rebuilding other structures). */
  liveItems(): number[] {
    const out: number[] = [];
    for (const a of [this.run, this.buf]) {
      for (let i = a === this.run ? this.pos : 0; i < a.length; i += S) if (this.live(a, i)) out.push(a[i + SLOT]);
    }
    return out;
  }

  private head(): number[] {
    return this.src === FROM_RUN ? this.run : this.buf;
  }

  private live(a: number[], i: number): boolean {
    return this.table.num(a[i + SLOT], Q_TOK) === a[i + TOKEN];
  }

  /** Finds the head again, dropping dead entries from both fronts while any are known. */
  private settle(): void {
    const run = this.run;
    const buf = this.buf;
    if (this.stale > 0) {
      while (this.pos < run.length && !this.live(run, this.pos)) {
        this.advance();
        this.stale--;
      }
      while (buf.length > 0 && !this.live(buf, 0)) {
        this.popBuf();
        this.stale--;
      }
    }
    const hasRun = this.pos < run.length;
    if (buf.length > 0 && (!hasRun || this.less(buf, 0, run, this.pos))) {
      this.src = FROM_BUF;
      this.at = 0;
    } else {
      this.src = hasRun ? FROM_RUN : NONE;
      this.at = this.pos;
    }
  }

  private dropHead(): void {
    if (this.src === FROM_RUN) this.advance();
    else this.popBuf();
  }

  private advance(): void {
    this.pos += S;
    const run = this.run;
    if (this.pos === run.length) {
      run.length = 0;
      this.pos = 0;
    } else if (this.pos >= 1024 * S && this.pos * 2 > run.length) {
      run.copyWithin(0, this.pos);
      run.length -= this.pos;
      this.pos = 0;
    }
  }

  /** Whether entry (k1, k2, k3, rank, slot) sorts after entry j of `b` (or ties it). */
  private after(k1: number, k2: number, k3: number, rank: number, slot: number, b: number[], j: number): boolean {
    if (k1 !== b[j]) return k1 > b[j];
    if (k2 !== b[j + 1]) return k2 > b[j + 1];
    if (k3 !== b[j + 2]) return k3 > b[j + 2];
    const rb = b[j + 3];
    if (rank !== 0 && rb !== 0) return rank > rb;
    return this.tie(slot, b[j + SLOT]) >= 0;
  }

  private less(a: number[], i: number, b: number[], j: number): boolean {
    if (a[i] !== b[j]) return a[i] < b[j];
    if (a[i + 1] !== b[j + 1]) return a[i + 1] < b[j + 1];
    if (a[i + 2] !== b[j + 2]) return a[i + 2] < b[j + 2];
    const ra = a[i + 3];
    const rb = b[j + 3];
    if (ra !== 0 && rb !== 0) return ra < rb;
    return this.tie(a[i + SLOT], b[j + SLOT]) < 0;
  }

  // ---- the insert buffer: a 4-ary heap, entries of S numbers

  private swap(i: number, j: number): void {
    const buf = this.buf;
    for (let k = 0; k < S; k++) {
      const v = buf[i + k];
      buf[i + k] = buf[j + k];
      buf[j + k] = v;
    }
  }

  private siftUp(i: number): void {
    const buf = this.buf;
    while (i > 0) {
      const parent = (((i / S - 1) >> 2) * S) | 0;
      if (!this.less(buf, i, buf, parent)) return;
      this.swap(i, parent);
      i = parent;
    }
  }

  private siftDown(i: number): void {
    const buf = this.buf;
    const n = buf.length;
    for (;;) {
      const first = (4 * (i / S) + 1) * S;
      if (first >= n) return;
      let best = first;
      const end = first + 4 * S < n ? first + 4 * S : n;
      for (let c = first + S; c < end; c += S) if (this.less(buf, c, buf, best)) best = c;
      if (!this.less(buf, best, buf, i)) return;
      this.swap(i, best);
      i = best;
    }
  }

  private popBuf(): void {
    const buf = this.buf;
    const last = buf.length - S;
    if (last > 0) this.swap(0, last);
    buf.length = last;
    if (last > S) this.siftDown(0);
  }

  /** Takes the buffer's entries out in order (dead ones dropped) and merges them with the run. */
  private merge(): void {
    const sorted: number[] = [];
    while (this.buf.length > 0) {
      if (this.stale === 0 || this.live(this.buf, 0)) for (let k = 0; k < S; k++) sorted.push(this.buf[k]);
      else this.stale--;
      this.popBuf();
    }
    const run = this.run;
    const out = this.spare;
    out.length = 0;
    let i = this.pos;
    let j = 0;
    while (i < run.length || j < sorted.length) {
      let from: number[];
      let k: number;
      if (j >= sorted.length || (i < run.length && !this.less(sorted, j, run, i))) {
        from = run;
        k = i;
        i += S;
      } else {
        from = sorted;
        k = j;
        j += S;
      }
      if (this.stale > 0 && from === run && !this.live(run, k)) {
        this.stale--;
        continue;
      }
      out.push(from[k], from[k + 1], from[k + 2], from[k + 3], from[k + TOKEN], from[k + SLOT]);
    }
    run.length = 0;
    this.spare = run;
    this.run = out;
    this.pos = 0;
    // every entry was read or accounted for: what is left is live (as lazy-heap.ts's compact)
    this.stale = 0;
  }
}
