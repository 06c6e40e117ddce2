/** What GET /admin/timeline answers for one task. */
export interface TimelineEntry {
  taskId: string;
  type: string;
  providerKey: string;
  tenantId: string | null;
  priority: number;
  kind: string | null;
  plan: string | null;
  createdAt: number;
  startedAt: number | null;
  finishedAt: number | null;
  /** Order in which the demo saw the first start (exact, no clock ties); null until started. */
  startedSeq: number | null;
  status: string;
}

/** What GET /admin/vendors answers for one vendor. */
export interface VendorStats {
  name: string;
  contract: { submitsPerSecond: number; maxConcurrentJobsPerAccount: number | null; jitterToleranceMs: number };
  submitRequests: number;
  accepted: number;
  injected429: number;
  injected503: number;
  violations: { rate: number; accountConcurrency: number };
  peakSubmitsPerSecond: number;
  peakConcurrentJobsByAccount: Record<string, number>;
}

export interface CheckResult {
  name: string;
  ok: boolean;
  detail: string;
}
