import type { Fence, Task } from '../../../core/task';
import { TaskStatus } from '../../../core/task';
import type { CompletionOutcome } from '../../../core/task-store.port';
import type { StoreContext } from '../context';
import { rowToTask } from '../rows';
import { pgCompleteFunctionName } from '../schema/pg-functions';
import { whyRejected } from './fenced-write';

interface Pending {
  fence: Fence;
  outcome: CompletionOutcome;
  now: number | null;
  resolve(t: Task): void;
  reject(e: unknown): void;
}

const MAX_BATCH = 500;
const LIVE = [TaskStatus.SUBMITTING, TaskStatus.SUBMITTED, TaskStatus.RUNNING];

/**
 * complete() on PostgreSQL, gathered: the calls made during one event-loop turn (a worker's
 * handlers finishing together) go to the server as ONE call of `<prefix>complete`
 * (schema/pg-functions.ts), instead of one round trip each. Every task is still its own fenced
 * write with its own result (a stale fence rejects only that call); the clock is read per call
 * when a test clock is injected. A second call for the same task waits for the next batch.
 * If a batch fails as a whole, its calls are retried one by one, so an error reaches only
 * the calls it belongs to.
 */
export class PgCompleteBatcher {
  private pending: Pending[] = [];
  private scheduled = false;

  constructor(private readonly c: StoreContext) {}

  complete(fence: Fence, outcome: CompletionOutcome): Promise<Task> {
    return new Promise<Task>((resolve, reject) => {
      this.pending.push({ fence, outcome, now: this.c.clock ? this.c.clock.now() : null, resolve, reject });
      this.schedule();
    });
  }

  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => this.flush());
  }

  private flush(): void {
    this.scheduled = false;
    const all = this.pending;
    this.pending = [];
    const ids = new Set<string>();
    let batch: Pending[] = [];
    for (const p of all) {
      if (ids.has(p.fence.id)) {
        this.pending.push(p); // the same task twice: the later call goes in the next batch
        continue;
      }
      ids.add(p.fence.id);
      batch.push(p);
      if (batch.length === MAX_BATCH) {
        void this.run(batch);
        batch = [];
        ids.clear();
      }
    }
    if (batch.length > 0) void this.run(batch);
    if (this.pending.length > 0) this.schedule();
  }

  private async run(items: Pending[]): Promise<void> {
    let rows;
    try {
      rows = await this.send(items);
    } catch (e) {
      if (items.length === 1) items[0].reject(e);
      else for (const p of items) void this.run([p]);
      return;
    }
    const byId = new Map(rows.map((r) => [String(r.id), r]));
    for (const p of items) {
      const r = byId.get(p.fence.id);
      if (r) p.resolve(rowToTask(r));
      else whyRejected(this.c, p.fence, { from: LIVE, op: 'complete' }).then(p.reject, p.reject);
    }
  }

  private async send(items: Pending[]) {
    const c = this.c;
    const text = `SELECT * FROM ${pgCompleteFunctionName(c.t)}($1, $2, $3, $4, $5, $6, $7, $8)`;
    const values = [
      c.queue,
      items.map((p) => p.now),
      items.map((p) => p.fence.id),
      items.map((p) => p.fence.leaseId),
      items.map((p) => p.fence.version),
      items.map((p) => p.outcome.status),
      items.map((p) => (p.outcome.result === undefined ? null : JSON.stringify(p.outcome.result))),
      items.map((p) => p.outcome.error ?? null),
    ];
    for (let attempt = 1; ; attempt++) {
      try {
        return await c.pg!.rows(text, values);
      } catch (e) {
        if (attempt >= 5 || !c.d.isRetryable(e)) throw e;
        await new Promise((r) => setTimeout(r, Math.floor(Math.random() * 10 * attempt)));
      }
    }
  }
}
