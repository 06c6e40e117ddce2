import { ALL_STATUSES, TaskStatus, type Task } from '../../core/task';
import { NOT_PLAIN, plainCopy } from './plain-copy';
import { objectArray } from './object-array';

/** Small integer of each status (index of the per-status bitmaps and counters). */
export const STATUS_CODE: Readonly<Record<TaskStatus, number>> = Object.fromEntries(
  ALL_STATUSES.map((s, i) => [s, i]),
) as Record<TaskStatus, number>;
export const STATUS_COUNT = ALL_STATUSES.length;

/** Where a PENDING_SUBMIT task waits. */
export const QUEUE_NONE = 0;
export const QUEUE_DUE = 1; // in its lane (runAt <= now at the last promotion)
export const QUEUE_DELAYED = 2; // in the delayed heap

/** Which deadline heap holds the task (only tasks without a live lease are in one). */
export const DEADLINE_NONE = 0;
export const DEADLINE_DUE = 1; // due PENDING_SUBMIT: timed out by claimSubmissions
export const DEADLINE_OTHER = 2; // delayed PENDING_SUBMIT, or in flight without a lease

/** Which lease heap holds the task. */
export const LEASE_NONE = 0;
export const LEASE_SUBMIT = 1; // SUBMITTING
export const LEASE_POLL = 2; // SUBMITTED / RUNNING claimed for a poll

/** Which poll heap holds the task (SUBMITTED / RUNNING without a live lease). */
export const POLL_NONE = 0;
export const POLL_DUE = 1; // by nextPollAt
export const POLL_CANCEL = 2; // cancelRequested: claimable at once

// ---- number fields: 12 doubles per slot (NaN = null) ----
export const RUN_AT = 0;
export const DEADLINE_AT = 1;
export const CREATED_AT = 2;
export const UPDATED_AT = 3;
export const LEASE_UNTIL = 4;
export const NEXT_POLL_AT = 5;
export const FINISHED_AT = 6;
export const SEQ = 7;
/** Membership tokens (see lazy-heap.ts): lane or delayed heap (shared by the priority bucket), deadline, lease, poll. */
export const Q_TOK = 8;
export const D_TOK = 9;
export const L_TOK = 10;
export const P_TOK = 11;

// ---- int32 fields (int32 index within the slot's 32 int32 words) ----
export const PRIORITY = 24;
export const VERSION = 25;
export const ATTEMPTS = 26;
export const MAX_ATTEMPTS = 27;
export const POLL_ERRORS = 28;

// ---- byte fields (byte index within the slot's 128 bytes) ----
/** Status code (STATUS_CODE). */
export const SC = 116;
export const QUEUE = 117;
export const DEADLINE = 118;
export const LEASE = 119;
export const POLL = 120;
export const FLAGS = 121;

export const F_IDEMPOTENT = 1;
export const F_CANCEL_REQUESTED = 2;
/** SUBMITTED / RUNNING whose lease expired but was not cleared yet (see claimPolls). */
export const F_EXPIRED_LEASE = 4;
/** Creation rank (order-mode.ts) is the seq: no task before it has a later createdAt. Else 0. */
export const F_RANKED = 8;
/** The payload column holds the payload's JSON text (an object or array payload). */
export const F_PAYLOAD_JSON = 16;
/** As F_PAYLOAD_JSON, for the result. */
export const F_RESULT_JSON = 32;
/** The payload column holds a private deep copy of an object or array payload of plain data. */
export const F_PAYLOAD_COPY = 128;
/** The task's priority-bucket entry is in the bucket's heap of late entries (bucket-queue.ts), not its ring. */
export const F_BUCKET_LATE = 64;

// ---- reference fields ----
export const ID = 0;
export const IDEMPOTENCY_KEY = 1;
export const TYPE = 2;
/** The LaneKeys of the task's admission keys (kept for the task's life). */
export const KEYS = 3;
export const PAYLOAD = 4;
export const RESULT = 5;
export const ERROR = 6;
export const EXTERNAL_ID = 7;
export const LEASE_OWNER = 8;
/**
 * The lease's number, a small integer (a V8 Smi: storing it writes no pointer, so a claim makes
 * and stores no string in the table); the lease id string is built from it when read (leaseId()).
 */
export const LEASE_ID = 9;
/** The live lane while the task is not terminal, else null. */
export const LANE = 10;
/** DESIGN §7 fields of the task (TaskPolicy), null when it has neither a boost nor a fair tag. */
export const POLICY = 11;

/**
 * A task's DESIGN §7 fields, one object per task that has any (policy-state.ts): its fair tag
 * (exact) and its deadline boost, with the token of its entry in the boost heap (0 once fired).
 */
export interface TaskPolicy {
  tag: bigint | null;
  boostAt: number | null;
  boostPriority: number | null;
  boostTok: number;
}

/** Doubles per slot (128 bytes: int32 and byte fields share the last 32 bytes). */
const ND = 16;
/** References per slot. */
const NR = 12;
const PAGE_SHIFT = 12;
const PAGE = 1 << PAGE_SHIFT;
const MASK = PAGE - 1;

/** The admission keys of a lane, shared by its tasks (and kept by them after the lane is gone). */
export interface LaneKeys {
  readonly providerKey: string;
  readonly accountId: string | null;
  readonly tenantId: string | null;
  readonly concurrencyKey: string | null;
}

/** What an order comparison reads of a task (core/order-key.ts). */
export interface OrderFields {
  priority: number;
  runAt: number;
  createdAt: number;
  seq: number;
}

/**
 * Every task of the memory store lives in a numbered slot of this table: numbers in typed-array
 * pages (one 128-byte block per slot: 12 doubles, 5 int32, 6 bytes), strings and other references
 * in array pages (12 per slot). So a task costs the garbage collector its id and payload strings
 * only, not a record object with boxed numbers, and the fields of one task share cache lines.
 * Slots of purged tasks are reused; membership tokens are store-wide increasing numbers, so a
 * heap entry of an earlier occupant never matches a new one.
 */
export class TaskTable {
  /** A lease id is this prefix, the lease number and the slot, in base 36 (see leaseId()). */
  constructor(readonly leasePrefix = 'lease-') {}

  private readonly f64 = objectArray<Float64Array>();
  private readonly i32 = objectArray<Int32Array>();
  private readonly u8 = objectArray<Uint8Array>();
  private readonly refs = objectArray<unknown[]>();
  private readonly free: number[] = [];
  private next = 0;

  /** Slots handed out so far (used or free): valid slots are 0 .. size - 1. */
  get size(): number {
    return this.next;
  }

  /** A fresh slot; every field must be written by the caller (the store's create). */
  alloc(): number {
    if (this.free.length > 0) return this.free.pop()!;
    const s = this.next++;
    if ((s & MASK) === 0) {
      const buf = new ArrayBuffer(PAGE * ND * 8);
      this.f64.push(new Float64Array(buf));
      this.i32.push(new Int32Array(buf));
      this.u8.push(new Uint8Array(buf));
      this.refs.push(new Array<unknown>(PAGE * NR).fill(null));
    }
    return s;
  }

  /** Drops the slot's references (so their strings can be collected) and makes it reusable. */
  release(s: number): void {
    const r = this.refs[s >> PAGE_SHIFT];
    const base = (s & MASK) * NR;
    for (let k = 0; k < NR; k++) r[base + k] = null;
    this.free.push(s);
  }

  num(s: number, field: number): number {
    return this.f64[s >> PAGE_SHIFT][(s & MASK) * ND + field];
  }

  setNum(s: number, field: number, v: number): void {
    this.f64[s >> PAGE_SHIFT][(s & MASK) * ND + field] = v;
  }

  /** A nullable number field (NaN stands for null). */
  opt(s: number, field: number): number | null {
    const v = this.f64[s >> PAGE_SHIFT][(s & MASK) * ND + field];
    return v === v ? v : null;
  }

  setOpt(s: number, field: number, v: number | null): void {
    this.f64[s >> PAGE_SHIFT][(s & MASK) * ND + field] = v === null ? NaN : v;
  }

  int(s: number, field: number): number {
    return this.i32[s >> PAGE_SHIFT][(s & MASK) * (ND * 2) + field];
  }

  setInt(s: number, field: number, v: number): void {
    this.i32[s >> PAGE_SHIFT][(s & MASK) * (ND * 2) + field] = v;
  }

  byte(s: number, field: number): number {
    return this.u8[s >> PAGE_SHIFT][(s & MASK) * (ND * 8) + field];
  }

  setByte(s: number, field: number, v: number): void {
    this.u8[s >> PAGE_SHIFT][(s & MASK) * (ND * 8) + field] = v;
  }

  flag(s: number, bit: number): boolean {
    return (this.u8[s >> PAGE_SHIFT][(s & MASK) * (ND * 8) + FLAGS] & bit) !== 0;
  }

  setFlag(s: number, bit: number, on: boolean): void {
    const a = this.u8[s >> PAGE_SHIFT];
    const i = (s & MASK) * (ND * 8) + FLAGS;
    a[i] = on ? a[i] | bit : a[i] & ~bit;
  }

  ref<T>(s: number, field: number): T {
    return this.refs[s >> PAGE_SHIFT][(s & MASK) * NR + field] as T;
  }

  setRef(s: number, field: number, v: unknown): void {
    this.refs[s >> PAGE_SHIFT][(s & MASK) * NR + field] = v;
  }

  id(s: number): string {
    return this.refs[s >> PAGE_SHIFT][(s & MASK) * NR + ID] as string;
  }

  /** The task's lease id, or null when it holds no lease. */
  leaseId(s: number): string | null {
    const n = this.refs[s >> PAGE_SHIFT][(s & MASK) * NR + LEASE_ID] as number | null;
    return n === null ? null : this.leasePrefix + n.toString(36) + '.' + s.toString(36);
  }

  seq(s: number): number {
    return this.f64[s >> PAGE_SHIFT][(s & MASK) * ND + SEQ];
  }

  status(s: number): TaskStatus {
    return ALL_STATUSES[this.u8[s >> PAGE_SHIFT][(s & MASK) * (ND * 8) + SC]];
  }

  /** Creation rank (order-mode.ts): the seq when ranked, else 0. */
  rank(s: number): number {
    return this.flag(s, F_RANKED) ? this.seq(s) : 0;
  }

  orderFields(s: number): OrderFields {
    return { priority: this.int(s, PRIORITY), runAt: this.num(s, RUN_AT), createdAt: this.num(s, CREATED_AT), seq: this.seq(s) };
  }

  /**
   * Reads a little of every listed slot (both halves of its numbers, its references, its payload
   * object) and nothing else: the loads of different slots do not depend on each other, so the
   * CPU overlaps their cache misses; the work on each slot that follows then finds it in cache.
   */
  prefetch(slots: readonly number[]): void {
    let sink = 0;
    for (let i = 0; i < slots.length; i++) {
      const s = slots[i];
      const page = s >> PAGE_SHIFT;
      const f = this.f64[page];
      const fo = (s & MASK) * ND;
      // a 128-byte block spans three cache lines unless the buffer is 64-byte aligned (malloc
      // gives 16): read its start, middle and end
      sink += f[fo] + f[fo + (ND >> 1)] + f[fo + ND - 1];
      const r = this.refs[page];
      const ro = (s & MASK) * NR;
      const p = r[ro + PAYLOAD];
      if (r[ro] === null || r[ro + (NR >> 1)] === null || r[ro + NR - 1] === null || (typeof p === 'object' && p !== null && (p as object).constructor === undefined)) sink++;
    }
    this.sink = sink;
  }

  /** Where prefetch() leaves what it read (so that no load is optimised away). */
  sink = 0;

  /** Sets the result: objects are kept serialised, like payloads. */
  setResult(s: number, result: unknown): void {
    const isObject = typeof result === 'object' && result !== null;
    this.setRef(s, RESULT, isObject ? JSON.stringify(result) : result === undefined ? null : result);
    this.setFlag(s, F_RESULT_JSON, isObject);
  }

  /**
   * What the payload column keeps of a payload, and its flag: an object or array of plain JSON
   * data as a private deep copy (F_PAYLOAD_COPY; copied again for every read: about 5x cheaper
   * than JSON.stringify + JSON.parse), any other object as its JSON text (F_PAYLOAD_JSON), a
   * primitive as is. So no caller can reach (and mutate) what the store keeps.
   */
  static storedPayload(p: unknown): { value: unknown; flag: number } {
    if (typeof p !== 'object' || p === null) return { value: p === undefined ? null : p, flag: 0 };
    const copy = plainCopy(p);
    return copy === NOT_PLAIN ? { value: JSON.stringify(p), flag: F_PAYLOAD_JSON } : { value: copy, flag: F_PAYLOAD_COPY };
  }

  /**
   * A fresh Task object with the slot's fields. Object payloads are copied (or parsed) for every
   * copy, results parsed; a primitive payload (string, number, boolean, null) is immutable and
   * shared as is.
   */
  toTask(s: number): Task {
    const p = this.ref<unknown>(s, PAYLOAD);
    const flags = this.byte(s, FLAGS);
    return this.copy(s, (flags & F_PAYLOAD_COPY) !== 0 ? plainCopy(p) : (flags & F_PAYLOAD_JSON) !== 0 ? JSON.parse(p as string) : p);
  }

  /** toTask with a given payload: create hands the caller's own input object back (never stored). */
  toCreatedTask(s: number, payload: unknown): Task {
    return this.copy(s, this.flag(s, F_PAYLOAD_JSON | F_PAYLOAD_COPY) ? payload : this.ref<unknown>(s, PAYLOAD));
  }

  private copy(s: number, payload: unknown): Task {
    const page = s >> PAGE_SHIFT;
    const f = this.f64[page];
    const i = this.i32[page];
    const b = this.u8[page];
    const r = this.refs[page];
    const fo = (s & MASK) * ND;
    const io = fo * 2;
    const bo = fo * 8;
    const ro = (s & MASK) * NR;
    const keys = r[ro + KEYS] as LaneKeys;
    const flags = b[bo + FLAGS];
    const result = r[ro + RESULT];
    const opt = (v: number) => (v === v ? v : null);
    const policy = r[ro + POLICY] as TaskPolicy | null;
    return {
      id: r[ro + ID] as string,
      idempotencyKey: r[ro + IDEMPOTENCY_KEY] as string | null,
      type: r[ro + TYPE] as string,
      payload,
      priority: i[io + PRIORITY],
      providerKey: keys.providerKey,
      accountId: keys.accountId,
      tenantId: keys.tenantId,
      concurrencyKey: keys.concurrencyKey,
      runAt: f[fo + RUN_AT],
      deadlineAt: opt(f[fo + DEADLINE_AT]),
      boostAt: policy === null ? null : policy.boostAt,
      boostPriority: policy === null ? null : policy.boostPriority,
      fairTag: policy === null || policy.tag === null ? null : policy.tag.toString(),
      createdAt: f[fo + CREATED_AT],
      seq: f[fo + SEQ],
      status: ALL_STATUSES[b[bo + SC]],
      version: i[io + VERSION],
      attempts: i[io + ATTEMPTS],
      maxAttempts: i[io + MAX_ATTEMPTS],
      idempotent: (flags & F_IDEMPOTENT) !== 0,
      leaseOwner: r[ro + LEASE_OWNER] as string | null,
      leaseId: this.leaseId(s),
      leaseUntil: opt(f[fo + LEASE_UNTIL]),
      result: (flags & F_RESULT_JSON) !== 0 ? JSON.parse(result as string) : result,
      error: r[ro + ERROR] as string | null,
      externalId: r[ro + EXTERNAL_ID] as string | null,
      nextPollAt: opt(f[fo + NEXT_POLL_AT]),
      pollErrors: i[io + POLL_ERRORS],
      cancelRequested: (flags & F_CANCEL_REQUESTED) !== 0,
      updatedAt: f[fo + UPDATED_AT],
      finishedAt: opt(f[fo + FINISHED_AT]),
    };
  }
}
