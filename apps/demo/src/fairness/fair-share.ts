import { Plan } from '../priority/plan';
import type { StoreSelection } from '../store/store-selection';

/**
 * Fair share of the `ocr` queue (the library's queue option `fairness: 'tenant'`, DESIGN §7):
 * at one priority level, tenants with work waiting are served in proportion to their weights,
 * so one tenant's big archive batch no longer holds another tenant's archive back until it is
 * done. Priorities still decide first: an upload or an incident overtakes every archive job.
 *
 * `DEMO_FAIR_SHARE`: `auto` (default: on where the store implements fair share), `on` (a store
 * without it stops start-up with NotSupportedByStoreError), `off`. The option is fixed for a
 * queue's life: a Redis or SQL queue created with one setting refuses the other at start-up
 * (use a fresh Redis prefix / database, or keep the setting).
 */
export type FairShareSetting = 'auto' | 'on' | 'off';
export const FAIR_SHARE_SETTINGS: readonly FairShareSetting[] = ['auto', 'on', 'off'];

/**
 * The demo's stores whose TaskStore implements fair share (TaskStore.policies.fairness) on this
 * version of the library. test/demo/fair-share-stores.spec.ts fails when this list and the
 * library disagree, so a store that gains fair share turns it on in the demo too.
 */
export const FAIR_SHARE_STORES: ReadonlySet<StoreSelection['kind']> = new Set(['memory', 'redis', 'sqlite', 'mysql', 'postgres']);

export function fairShareOn(setting: FairShareSetting, store: StoreSelection): boolean {
  return setting === 'on' || (setting === 'auto' && FAIR_SHARE_STORES.has(store.kind));
}

/**
 * Fair-share weight of a tenant by plan (AdmissionGuard.setTenantWeight, 1..1000): at one
 * priority level a PRO tenant gets two jobs started for each job of a FREE tenant, an ENTERPRISE
 * tenant three, while all have work waiting. Override with DEMO_PLAN_WEIGHTS (JSON, e.g.
 * `{"PRO":1,"ENTERPRISE":1}` for equal shares).
 */
export const DEFAULT_PLAN_WEIGHTS: Readonly<Record<Plan, number>> = {
  [Plan.FREE]: 1,
  [Plan.PRO]: 2,
  [Plan.ENTERPRISE]: 3,
};

/** Whether the demo's `ocr` queue runs with fair share (its setting on its store). */
export function fairShareEnabled(config: { fairShare: { setting: FairShareSetting }; store: StoreSelection }): boolean {
  return fairShareOn(config.fairShare.setting, config.store);
}
