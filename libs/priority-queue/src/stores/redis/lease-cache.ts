import type { Task } from '../../core/task';

/** A leased task as the server holds it: its hash (fields the server has) and the decoded task. */
export interface LeasedTask {
  hash: Record<string, string>;
  /** Read only: its immutable properties (admission keys) go into fenced writes. */
  task: Task;
}

/**
 * The tasks this store handed out under a lease, as the server holds them, so that a fenced
 * write can return the task as written without reading it back, and send what it needs of the
 * task instead of reading it: the script checks the fence (lease id and version, and every
 * change of a task bumps its version), so when the fence matches the cached entry, the server's
 * hash is that hash plus the write's own changes.
 * Bounded: the oldest entries go first (a lease that is never written again only costs memory
 * until then).
 */
export class LeaseCache {
  private readonly entries = new Map<string, LeasedTask>();

  constructor(private readonly max = 100_000) {}

  set(id: string, hash: Record<string, string>, task: Task): void {
    this.entries.delete(id);
    this.entries.set(id, { hash, task });
    if (this.entries.size > this.max) this.entries.delete(this.entries.keys().next().value as string);
  }

  /** The cached entry when it is the one the fence names. */
  match(id: string, leaseId: string, version: number): LeasedTask | undefined {
    const e = this.entries.get(id);
    return e && e.hash.leaseId === leaseId && e.hash.version === String(version) ? e : undefined;
  }

  delete(id: string): void {
    this.entries.delete(id);
  }

  clear(): void {
    this.entries.clear();
  }
}
