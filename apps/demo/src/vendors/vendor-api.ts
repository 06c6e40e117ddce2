import type { VendorName } from '../config/demo-config';

/** What a client sends to submit an OCR job. */
export interface OcrJobRequest {
  account: string;
  /** The vendor returns the job already created for this key instead of a second job. */
  idempotencyKey: string;
  pages: number;
}

export type OcrJobStatus =
  | { jobId: string; state: 'running'; checkAgainInMs: number }
  | { jobId: string; state: 'done'; pages: number; text: string }
  | { jobId: string; state: 'canceled' };

/** What a simulated vendor saw, for GET /admin/vendors and the load script. */
export interface VendorStats {
  name: VendorName;
  contract: { submitsPerSecond: number; maxConcurrentJobsPerAccount: number | null; jitterToleranceMs: number };
  submitRequests: number;
  accepted: number;
  injected429: number;
  injected503: number;
  pollRequests: number;
  /** Requests that broke the contract (answered 429): must stay 0. */
  violations: { rate: number; accountConcurrency: number };
  /** Most submits seen in any sliding second (less the jitter tolerance). */
  peakSubmitsPerSecond: number;
  peakConcurrentJobsByAccount: Record<string, number>;
  runningJobsByAccount: Record<string, number>;
}
