import type { LimitUpdate } from './admission';
import { NotSupportedByStoreError, ValidationError } from './errors';
import { Messages } from './messages';
import type { Fairness } from './fairness';
import type { NewTask } from './task';
import type { StorePolicies } from './task-store.port';

/**
 * How a store refuses a scheduling policy of DESIGN §7 it does not implement (TaskStore.policies):
 * with NotSupportedByStoreError, before anything is written; never by ignoring it.
 */
export const FEATURE_FAIRNESS = "Fair share between tenants (fairness: 'tenant')";
export const FEATURE_BOOST = 'A deadline boost';
export const FEATURE_TENANT_WEIGHT = 'A tenant weight (fair share)';

/** At construction: the fairness option. */
export function refuseFairness(store: string, policies: StorePolicies, fairness: Fairness | null): void {
  if (fairness !== null && !policies.fairness) throw new NotSupportedByStoreError(FEATURE_FAIRNESS, store);
}

/** At create: a task with a boost. */
export function refuseBoosts(store: string, policies: StorePolicies, tasks: readonly NewTask[]): void {
  if (policies.boost) return;
  for (const t of tasks) if (t.boost != null) throw new NotSupportedByStoreError(FEATURE_BOOST, store);
}

/**
 * At setLimits: a tenant weight, on a store without fair share (NotSupportedByStoreError) or on a
 * queue of a store with it that was opened without it (ValidationError: the weight would do nothing).
 */
export function refuseWeights(store: string, policies: StorePolicies, update: LimitUpdate, fairness: Fairness | null = null, queue = 'default'): void {
  if (update.kind !== 'tenantWeight') return;
  if (!policies.fairness) throw new NotSupportedByStoreError(FEATURE_TENANT_WEIGHT, store);
  if (fairness === null) throw new ValidationError(Messages.weightWithoutFairness(queue), ['kind: tenantWeight']);
}
