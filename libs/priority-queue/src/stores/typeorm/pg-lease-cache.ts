import type { Row } from './db';

/** A task this store claimed, as the claim's UPDATE wrote it, and where that row version lives. */
export interface LeasedRow {
  row: Row;
  /** The row version's ctid ("(page,item)"): a complete finds it by a TID scan, no index probe. */
  ctid: string;
}

/**
 * PostgreSQL: the tasks this store claimed, kept until their complete, so a batch
 * of completes sends each task's ctid instead of making the server find it by the id index,
 * and gets back only the id and the time written instead of the whole row.
 *
 * An entry is used only when the fence names it (same lease id and version): every change of
 * a task bumps its version, so the server's row is then the cached row (the server re-checks
 * the fence, the id and the ctid; a row that moved since is simply sent again the long way).
 * Bounded: the oldest entries go first.
 */
export class PgLeaseCache {
  private readonly entries = new Map<string, LeasedRow>();

  constructor(private readonly max = 100_000) {}

  set(id: string, row: Row, ctid: string): void {
    this.entries.delete(id);
    this.entries.set(id, { row, ctid });
    if (this.entries.size > this.max) this.entries.delete(this.entries.keys().next().value as string);
  }

  match(id: string, leaseId: string, version: number): LeasedRow | undefined {
    const e = this.entries.get(id);
    return e && e.row.lease_id === leaseId && Number(e.row.version) === version ? e : undefined;
  }

  delete(id: string): void {
    this.entries.delete(id);
  }
}
