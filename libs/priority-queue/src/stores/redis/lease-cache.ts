/**
 * The hashes of the tasks this store handed out under a lease, as the server holds them, so that
 * a fenced write can return the task as written without reading it back: the script checks the
 * fence (lease id and version, and every change of a task bumps its version), so when the fence
 * matches the cached hash, the server's hash is that hash plus the write's own changes.
 * Bounded: the oldest entries go first (a lease that is never written again only costs memory
 * until then).
 */
export class LeaseCache {
  private readonly entries = new Map<string, Record<string, string>>();

  constructor(private readonly max = 100_000) {}

  set(id: string, hash: Record<string, string>): void {
    this.entries.delete(id);
    this.entries.set(id, hash);
    if (this.entries.size > this.max) this.entries.delete(this.entries.keys().next().value as string);
  }

  /** The cached hash when it is the one the fence names. */
  match(id: string, leaseId: string, version: number): Record<string, string> | undefined {
    const h = this.entries.get(id);
    return h && h.leaseId === leaseId && h.version === String(version) ? h : undefined;
  }

  delete(id: string): void {
    this.entries.delete(id);
  }

  clear(): void {
    this.entries.clear();
  }
}
