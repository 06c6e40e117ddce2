import type { Plan } from '../priority/plan';
import type { WorkKind } from '../priority/work-kind';

/** Payload of an OCR task. Set by the server from the authenticated tenant and the route. */
export interface DocumentPayload {
  tenantId: string;
  plan: Plan;
  kind: WorkKind;
  document: { name: string; pages: number };
  /** For INCIDENT_RECOVERY: the incident being recovered. */
  incidentId?: string;
  /** For INCIDENT_RECOVERY: the business records to re-run. */
  records?: string[];
}

/** Payload of a re-index flow. */
export interface ReindexPayload {
  tenantId: string;
  plan: Plan;
  kind: WorkKind;
  reason?: string;
}
