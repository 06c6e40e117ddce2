import { randomUUID } from 'node:crypto';
import {
  ALL_STATUSES,
  compareOrder,
  fenceOf,
  type LimitUpdate,
  type ManualClock,
  type NewTask,
  type SubmissionClaim,
  type Task,
  type TaskStore,
  TaskStatus,
} from '../../libs/priority-queue/src/core';
import { plainTask } from '../support/new-task';

/** Start of every test's clock (ManualClock's default, a realistic epoch). */
export const T0 = 1_700_000_000_000;

/** Deterministic PRNG (mulberry32) so that generated cases are reproducible. */
export function rng(seed: number): (n: number) => number {
  let a = seed >>> 0;
  const next = (): number => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  /** Integer in [0, n). */
  return (n: number) => Math.floor(next() * n);
}

let payloadCounter = 0;

/**
 * One isolated store plus the helpers every case uses. All time comes from `clock`; nothing sleeps.
 */
export class Harness {
  constructor(
    readonly store: TaskStore,
    readonly clock: ManualClock,
  ) {}

  /** A valid NewTask with neutral defaults (provider 'p', no admission keys, due now). */
  newTask(over: Partial<NewTask> = {}): NewTask {
    return plainTask({ id: randomUUID(), payload: { n: ++payloadCounter }, ...over });
  }

  /** Creates all in ONE store call; every input must be new. */
  async create(...overs: Partial<NewTask>[]): Promise<Task[]> {
    const res = await this.store.create(overs.map((o) => this.newTask(o)));
    expect(res.map((r) => r.created)).toEqual(overs.map(() => true));
    return res.map((r) => r.task);
  }

  async createOne(over: Partial<NewTask> = {}): Promise<Task> {
    return (await this.create(over))[0];
  }

  claimRaw(limit: number, opts: { leaseMs?: number; owner?: string } = {}): Promise<SubmissionClaim> {
    return this.store.claimSubmissions({ owner: opts.owner ?? 'worker-1', limit, leaseMs: opts.leaseMs ?? 30_000 });
  }

  async claim(limit: number, opts: { leaseMs?: number; owner?: string } = {}): Promise<Task[]> {
    const res = await this.claimRaw(limit, opts);
    expect(res.timedOut).toEqual([]);
    return res.claimed;
  }

  async claimIds(limit: number, opts: { leaseMs?: number; owner?: string } = {}): Promise<string[]> {
    return ids(await this.claim(limit, opts));
  }

  /** Creates one task and claims it; it must be the only candidate claimed. */
  async hold(over: Partial<NewTask> = {}, leaseMs = 30_000): Promise<Task> {
    const t = await this.createOne(over);
    const claimed = await this.claim(1, { leaseMs });
    expect(ids(claimed)).toEqual([t.id]);
    return claimed[0];
  }

  async mustGet(id: string): Promise<Task> {
    const t = await this.store.get(id);
    if (!t) throw new Error(`task ${id} not found`);
    return t;
  }

  /** Every task of one status through list paging. */
  async listAll(status: TaskStatus): Promise<Task[]> {
    const out: Task[] = [];
    let after: number | undefined;
    for (;;) {
      const page = await this.store.list({ status, limit: 500, afterSeq: after });
      out.push(...page);
      if (page.length < 500) return out;
      after = page[page.length - 1].seq;
    }
  }

  /** Every task in the store, any status. */
  async all(): Promise<Task[]> {
    const out: Task[] = [];
    for (const s of ALL_STATUSES) out.push(...(await this.listAll(s)));
    return out;
  }

  async status(id: string): Promise<TaskStatus | null> {
    return (await this.store.get(id))?.status ?? null;
  }

  /** Nothing at all was written: no task of any status. */
  async expectEmpty(): Promise<void> {
    expect(await this.all()).toEqual([]);
    const stats = await this.store.stats();
    for (const s of ALL_STATUSES) expect(stats.byStatus[s] ?? 0).toBe(0);
  }

  async setLimitsAll(updates: readonly LimitUpdate[]): Promise<void> {
    for (const u of updates) await this.store.setLimits(u);
  }

  async complete(t: Task, status: TaskStatus.SUCCEEDED | TaskStatus.FAILED | TaskStatus.CANCELED = TaskStatus.SUCCEEDED): Promise<Task> {
    return this.store.complete(fenceOf(t), { status, result: status === TaskStatus.SUCCEEDED ? { ok: true } : null, error: status === TaskStatus.SUCCEEDED ? null : 'x' });
  }
}

export function ids(tasks: readonly Pick<Task, 'id'>[]): string[] {
  return tasks.map((t) => t.id);
}

/** Ids in the order of DESIGN §2 (aged when agingIntervalMs > 0). */
export function sortedIds(tasks: readonly Task[], agingIntervalMs = 0): string[] {
  return ids([...tasks].sort((a, b) => compareOrder(a, b, agingIntervalMs)));
}

/** Counts claimed tasks per value of a field. */
export function countBy<T>(items: readonly T[], key: (t: T) => string | null): Record<string, number> {
  const out: Record<string, number> = {};
  for (const it of items) {
    const k = String(key(it));
    out[k] = (out[k] ?? 0) + 1;
  }
  return out;
}

/** Drops zero entries, so "absent" and "0" compare equal. */
export function nonZero(rec: Record<string, number>): Record<string, number> {
  return Object.fromEntries(Object.entries(rec).filter(([, v]) => v !== 0));
}

/** Fisher–Yates with a seeded rng. */
export function shuffle<T>(items: readonly T[], r: (n: number) => number): T[] {
  const a = [...items];
  for (let i = a.length - 1; i > 0; i--) {
    const j = r(i + 1);
    [a[i], a[j]] = [a[j], a[i]];
  }
  return a;
}
