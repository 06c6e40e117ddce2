import { DEFAULT_CONCURRENCY_KEY_LIMIT } from '../../core/admission';
import type { LaneRoom, ProviderRoom, SlotRoom } from '../../core/lane-admission';
import type { LaneKeys } from './rows';
import { rk } from './rows';
import type { Resource } from './sql/resources';

/** Every resource a lane's admission reads (loaded into the claim's cache before its lanes are looked at). */
export function admissionKeys(l: LaneKeys): string[] {
  const keys = [rk.provider(l.provider_key)];
  if (l.account_id !== null) keys.push(rk.account(l.provider_key, l.account_id));
  if (l.tenant_id !== null) keys.push(rk.tenant(l.tenant_id), rk.defaultTenant());
  if (l.concurrency_key !== null) keys.push(rk.concurrencyKey(l.concurrency_key));
  return keys;
}

/** A provider row as core's admission rule reads it; advancing its GCRA state marks the row for writing. */
class ProviderView implements ProviderRoom {
  constructor(private readonly r: Resource) {}
  get paused(): boolean {
    return this.r.paused;
  }
  get qps(): number | null {
    return this.r.qps;
  }
  get burst(): number | null {
    return this.r.burst;
  }
  get tat(): number {
    return this.r.tat;
  }
  set tat(v: number) {
    this.r.tat = v;
    this.r.dirty = true;
  }
}

/** An account, tenant or concurrency-key row with its effective limit (the row's own, else `fallback`). */
class SlotView implements SlotRoom {
  constructor(
    private readonly r: Resource,
    private readonly fallback: () => number | null,
  ) {}
  get inUse(): number {
    return this.r.inUse;
  }
  set inUse(v: number) {
    this.r.inUse = v;
    this.r.dirty = true;
  }
  get limit(): number | null {
    return this.r.limit ?? this.fallback();
  }
}

/**
 * The limits of a lane over the resources loaded in the claim's transaction (core/lane-admission.ts
 * decides with them): account limit = its override, else the provider's accountConcurrency;
 * tenant quota = its override, else the default quota; concurrency key = its limit, else 1.
 */
export function laneRoom(l: LaneKeys, resources: ReadonlyMap<string, Resource>): LaneRoom {
  const res = (k: string): Resource => {
    const r = resources.get(k);
    if (r === undefined) throw new Error(`resource ${k} not loaded`);
    return r;
  };
  const p = res(rk.provider(l.provider_key));
  const defaultTenant = l.tenant_id === null ? null : res(rk.defaultTenant());
  return {
    provider: new ProviderView(p),
    account: l.account_id === null ? null : new SlotView(res(rk.account(l.provider_key, l.account_id)), () => p.accountConcurrency),
    tenant: l.tenant_id === null ? null : new SlotView(res(rk.tenant(l.tenant_id)), () => defaultTenant!.limit),
    concurrencyKey: l.concurrency_key === null ? null : new SlotView(res(rk.concurrencyKey(l.concurrency_key)), () => DEFAULT_CONCURRENCY_KEY_LIMIT),
  };
}
