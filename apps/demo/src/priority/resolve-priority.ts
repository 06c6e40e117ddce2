import { Plan } from './plan';
import { PriorityLevel } from './priority-level';
import { WorkKind } from './work-kind';

/**
 * The one place a priority is decided: from the authenticated tenant's plan and the kind of
 * work, never from the request body.
 *
 * - INCIDENT_RECOVERY -> URGENT (whatever the plan)
 * - BATCH_ARCHIVE -> BATCH (whatever the plan: the nightly archive is BATCH for everyone, so an
 *   ENTERPRISE tenant's archive never overtakes anyone's interactive work)
 * - ENTERPRISE -> HIGH
 * - anything else -> NORMAL
 */
export function resolvePriority(plan: Plan, kind: WorkKind): PriorityLevel {
  if (kind === WorkKind.INCIDENT_RECOVERY) return PriorityLevel.URGENT;
  if (kind === WorkKind.BATCH_ARCHIVE) return PriorityLevel.BATCH;
  if (plan === Plan.ENTERPRISE) return PriorityLevel.HIGH;
  return PriorityLevel.NORMAL;
}
