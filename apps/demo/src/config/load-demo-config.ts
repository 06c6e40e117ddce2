import { randomBytes } from 'node:crypto';
import { DEFAULT_PLAN_WEIGHTS, FAIR_SHARE_SETTINGS, type FairShareSetting } from '../fairness/fair-share';
import { PLANS, Plan } from '../priority/plan';
import { storeSelectionFromEnv } from '../store/store-selection';
import { DEFAULT_TENANTS } from './default-tenants';
import { DEFAULT_VENDORS } from './default-vendors';
import type { DemoConfig, TenantConfig, VendorConfig } from './demo-config';

/**
 * The demo's configuration from environment variables (all optional):
 * PORT, DEMO_ADMIN_KEY (when unset, a random key is generated for this run: main.ts prints it
 * once), DEMO_TENANTS (JSON array of tenants),
 * DEMO_ARCHIVE_SIZE (documents per tenant per night), DEMO_ERROR_SHARE and DEMO_429_SHARE
 * (fault injection of both vendors, 0..1), DEMO_WORKER_CONCURRENCY, DEMO_FAIR_SHARE (auto | on | off)
 * and DEMO_PLAN_WEIGHTS (JSON, fair-share weight per plan), and the store: PQ_STORE
 * with PQ_SQLITE_PATH / PQ_POSTGRES_URL / PQ_MYSQL_URL / PQ_REDIS_URL (+ PQ_REDIS_CONNECT_TIMEOUT_MS).
 */
export function loadDemoConfig(env: NodeJS.ProcessEnv = process.env): DemoConfig {
  const faults: Partial<VendorConfig> = {};
  if (env.DEMO_ERROR_SHARE !== undefined) faults.transientErrorShare = share(env, 'DEMO_ERROR_SHARE');
  if (env.DEMO_429_SHARE !== undefined) faults.tooManyRequestsShare = share(env, 'DEMO_429_SHARE');
  return {
    port: int(env, 'PORT', 3000),
    ...adminKey(env),
    tenants: env.DEMO_TENANTS ? parseTenants(env.DEMO_TENANTS) : DEFAULT_TENANTS,
    vendorByPlan: { [Plan.ENTERPRISE]: 'vendorA', [Plan.PRO]: 'vendorB', [Plan.FREE]: 'vendorB' },
    vendors: {
      vendorA: { ...DEFAULT_VENDORS.vendorA, ...faults },
      vendorB: { ...DEFAULT_VENDORS.vendorB, ...faults },
    },
    search: { reindexDurationMs: { min: 200, max: 800 }, pollHintMs: 100 },
    archive: { documentsPerTenant: int(env, 'DEMO_ARCHIVE_SIZE', 200) },
    workers: { concurrency: int(env, 'DEMO_WORKER_CONCURRENCY', 16), idlePollMs: 100, recoverEveryMs: 1000 },
    store: storeSelectionFromEnv(env),
    fairShare: { setting: fairShareSetting(env), weightsByPlan: planWeights(env) },
  };
}

function fairShareSetting(env: NodeJS.ProcessEnv): FairShareSetting {
  const raw = (env.DEMO_FAIR_SHARE ?? 'auto').trim().toLowerCase();
  if ((FAIR_SHARE_SETTINGS as readonly string[]).includes(raw)) return raw as FairShareSetting;
  throw new Error(`DEMO_FAIR_SHARE must be one of ${FAIR_SHARE_SETTINGS.join(', ')}; got "${env.DEMO_FAIR_SHARE}"`);
}

/** DEFAULT_PLAN_WEIGHTS, with the plans DEMO_PLAN_WEIGHTS names (integers 1..1000) replaced. */
function planWeights(env: NodeJS.ProcessEnv): Record<Plan, number> {
  const weights = { ...DEFAULT_PLAN_WEIGHTS };
  if (!env.DEMO_PLAN_WEIGHTS) return weights;
  const bad = () => new Error(`DEMO_PLAN_WEIGHTS must be a JSON object: each key a plan (${PLANS.join('|')}), each value an integer from 1 to 1000; got ${env.DEMO_PLAN_WEIGHTS}`);
  let given: unknown;
  try {
    given = JSON.parse(env.DEMO_PLAN_WEIGHTS);
  } catch {
    throw bad();
  }
  if (typeof given !== 'object' || given === null || Array.isArray(given)) throw bad();
  for (const [plan, w] of Object.entries(given)) {
    if (!PLANS.includes(plan as Plan) || !Number.isInteger(w) || (w as number) < 1 || (w as number) > 1000) throw bad();
    weights[plan as Plan] = w as number;
  }
  return weights;
}

/** The configured admin key, or a fresh random one: never a well-known default. */
function adminKey(env: NodeJS.ProcessEnv): Pick<DemoConfig, 'adminKey' | 'adminKeyGenerated'> {
  const configured = env.DEMO_ADMIN_KEY?.trim();
  if (configured) return { adminKey: configured, adminKeyGenerated: false };
  return { adminKey: randomBytes(16).toString('hex'), adminKeyGenerated: true };
}

function int(env: NodeJS.ProcessEnv, name: string, dflt: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return dflt;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 0) throw new Error(`${name} must be an integer >= 0, got "${raw}"`);
  return n;
}

function share(env: NodeJS.ProcessEnv, name: string): number {
  const n = Number(env[name]);
  if (!Number.isFinite(n) || n < 0 || n > 1) throw new Error(`${name} must be a number between 0 and 1, got "${env[name]}"`);
  return n;
}

function parseTenants(json: string): TenantConfig[] {
  const list = JSON.parse(json) as TenantConfig[];
  if (!Array.isArray(list) || list.length === 0) throw new Error('DEMO_TENANTS must be a non-empty JSON array');
  for (const t of list) {
    if (!t.id || !t.apiKey || !PLANS.includes(t.plan)) {
      throw new Error(`DEMO_TENANTS: each tenant needs id, apiKey and plan (${PLANS.join('|')}); got ${JSON.stringify(t)}`);
    }
    t.name ??= t.id;
    t.vendorAccount ??= `acct-${t.id}`;
  }
  return list;
}
