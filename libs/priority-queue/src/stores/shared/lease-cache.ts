import type { Fence } from '../../core/task';

/** What a store keeps of a task it handed out, with the fence it handed it out under. */
export interface Leased {
  readonly leaseId: string;
  readonly version: number;
}

/**
 * The tasks a store handed out under a lease, as its server holds them, so that a fenced write
 * (complete) can send what it knows instead of making the server find or read it, and build the
 * task as written without reading it back.
 *
 * An entry counts only while the fence names it (same lease id and version): every change of a
 * task bumps its version, so when the fence matches, the server's copy is the cached one (the
 * server still checks the fence; a write it refuses is answered from the server's copy).
 * Bounded: past `max` entries the oldest goes (a lease that is never written again only costs
 * memory until then).
 */
export class LeaseCache<V extends Leased> {
  private readonly entries = new Map<string, V>();

  constructor(private readonly max = 100_000) {}

  set(id: string, entry: V): void {
    this.entries.delete(id);
    this.entries.set(id, entry);
    if (this.entries.size > this.max) this.entries.delete(this.entries.keys().next().value as string);
  }

  /** The cached entry when it is the one the fence names. */
  match(fence: Fence): V | undefined {
    const e = this.entries.get(fence.id);
    return e !== undefined && e.leaseId === fence.leaseId && e.version === fence.version ? e : undefined;
  }

  delete(id: string): void {
    this.entries.delete(id);
  }

  clear(): void {
    this.entries.clear();
  }

  get size(): number {
    return this.entries.size;
  }
}
