import type { VendorName } from '../config/demo-config';

/** Task types of the demo: one OCR type per vendor, and the re-index flow. */
export const TaskTypes = {
  ocrOn: (vendor: VendorName) => `ocr.${vendor}` as const,
  OCR_VENDOR_A: 'ocr.vendorA',
  OCR_VENDOR_B: 'ocr.vendorB',
  REINDEX_TENANT: 'tenant.reindex',
} as const;

/** Retry and polling settings shared by the OCR handlers. */
export const OCR_TASK_OPTIONS = {
  idempotent: true,
  maxAttempts: 8,
  backoff: { baseMs: 100, maxMs: 2000 },
  pollIntervalMs: 100,
  maxPollIntervalMs: 2000,
} as const;
