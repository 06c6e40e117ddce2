import type { Plan } from '../priority/plan';
import type { FairShareSetting } from '../fairness/fair-share';
import type { StoreSelection } from '../store/store-selection';

/** Inclusive range of milliseconds; a value is drawn uniformly in it. */
export interface MsRange {
  min: number;
  max: number;
}

export type VendorName = 'vendorA' | 'vendorB';
export const VENDOR_NAMES: readonly VendorName[] = ['vendorA', 'vendorB'];

/** A tenant as configured: the API key header maps to it. */
export interface TenantConfig {
  id: string;
  name: string;
  plan: Plan;
  apiKey: string;
  /** The tenant's account at the OCR vendors (vendor A limits concurrent jobs per account). */
  vendorAccount: string;
}

/** What a simulated vendor promises and how it behaves. */
export interface VendorConfig {
  /** Contract: submits per second the vendor accepts (it answers 429 above). */
  submitsPerSecond: number;
  /** Contract: concurrent jobs per account; null = no limit. */
  maxConcurrentJobsPerAccount: number | null;
  submitLatencyMs: MsRange;
  jobDurationMs: MsRange;
  pollLatencyMs: MsRange;
  /** Share (0..1) of calls answered 503 (submit: before any job is created). */
  transientErrorShare: number;
  /** Share (0..1) of submits answered 429 although the contract was respected. */
  tooManyRequestsShare: number;
  /** Network jitter the vendor forgives when it counts submits per second (ms). */
  jitterToleranceMs: number;
  /** Longest "check again in" hint the vendor gives on a poll of a running job. */
  pollHintMs: number;
}

export interface DemoConfig {
  port: number;
  /** Value of the x-admin-key header of the admin routes. */
  adminKey: string;
  /** True when DEMO_ADMIN_KEY was unset and adminKey is random (main.ts prints it once). */
  adminKeyGenerated: boolean;
  tenants: TenantConfig[];
  /** Which vendor runs the OCR of a plan's documents. */
  vendorByPlan: Record<Plan, VendorName>;
  vendors: Record<VendorName, VendorConfig>;
  search: { reindexDurationMs: MsRange; pollHintMs: number };
  archive: {
    /** Historic documents enqueued per tenant each night (the schedule: archive-schedule.ts). */
    documentsPerTenant: number;
  };
  workers: { concurrency: number; idlePollMs: number; recoverEveryMs: number };
  store: StoreSelection;
  /** Fair share between tenants on the `ocr` queue (fairness/fair-share.ts; fairShareEnabled()). */
  fairShare: { setting: FairShareSetting; weightsByPlan: Record<Plan, number> };
}

/** Injection token of the DemoConfig. */
export const DEMO_CONFIG = Symbol('DEMO_CONFIG');
