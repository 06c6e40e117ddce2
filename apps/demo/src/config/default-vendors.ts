import type { VendorConfig, VendorName } from './demo-config';

const behaviour = {
  submitLatencyMs: { min: 20, max: 80 },
  jobDurationMs: { min: 100, max: 500 },
  pollLatencyMs: { min: 2, max: 10 },
  transientErrorShare: 0.03,
  tooManyRequestsShare: 0.03,
  jitterToleranceMs: 25,
  pollHintMs: 100,
};

/** Vendor A: the premium OCR API, strict. Vendor B: the bulk OCR API. */
export const DEFAULT_VENDORS: Record<VendorName, VendorConfig> = {
  vendorA: { ...behaviour, submitsPerSecond: 5, maxConcurrentJobsPerAccount: 2 },
  vendorB: { ...behaviour, submitsPerSecond: 20, maxConcurrentJobsPerAccount: null },
};
