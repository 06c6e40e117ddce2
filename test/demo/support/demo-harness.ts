import type { INestApplication } from '@nestjs/common';
import request from 'supertest';
import type { DemoConfig } from '../../../apps/demo/src/config/demo-config';
import { loadDemoConfig } from '../../../apps/demo/src/config/load-demo-config';
import { createDemoApp, type DemoApp } from '../../../apps/demo/src/create-demo-app';
import type { StoreSelection } from '../../../apps/demo/src/store/store-selection';

export const ADMIN = { 'x-admin-key': 'test-admin-key' };
export const ACME = { 'x-api-key': 'acme-key' }; // ENTERPRISE -> vendor A
export const GLOBEX = { 'x-api-key': 'globex-key' }; // PRO -> vendor B
export const INITECH = { 'x-api-key': 'initech-key' }; // FREE -> vendor B

export interface TaskBody {
  id: string;
  status: string;
  priority: number;
  priorityLevel: string;
  vendor: string;
  tenantId: string;
  kind: string;
  result: unknown;
}

/**
 * The demo configuration with short vendor timings and no injected faults, so tests run fast
 * and never depend on luck. Re-index jobs run for a minute: the tests end them by cancelling.
 */
export function testConfig(store: StoreSelection): DemoConfig {
  const base = loadDemoConfig({ DEMO_ADMIN_KEY: ADMIN['x-admin-key'] });
  const fast = {
    submitLatencyMs: { min: 1, max: 5 },
    jobDurationMs: { min: 5, max: 30 },
    pollLatencyMs: { min: 0, max: 2 },
    transientErrorShare: 0,
    tooManyRequestsShare: 0,
    pollHintMs: 10,
  };
  return {
    ...base,
    vendors: { vendorA: { ...base.vendors.vendorA, ...fast }, vendorB: { ...base.vendors.vendorB, ...fast } },
    search: { reindexDurationMs: { min: 60_000, max: 60_000 }, pollHintMs: 10 },
    workers: { concurrency: 8, idlePollMs: 10, recoverEveryMs: 100 },
    store,
  };
}

export async function startDemo(
  store: StoreSelection,
  overrides: Partial<DemoConfig> = {},
): Promise<{ demo: DemoApp; app: INestApplication; http: () => ReturnType<typeof request> }> {
  const demo = await createDemoApp({ ...testConfig(store), ...overrides }, { logger: false });
  await demo.app.init();
  const server = demo.app.getHttpServer();
  return { demo, app: demo.app, http: () => request(server) };
}

/** Repeats `probe` until it returns a value (not undefined / false), or fails after `timeoutMs`. */
export async function eventually<T>(probe: () => Promise<T | undefined | false>, what: string, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await probe();
      if (v !== undefined && v !== false) return v;
    } catch (e) {
      last = e;
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}${last ? `: ${String(last)}` : ''}`);
    await new Promise((r) => setTimeout(r, 15));
  }
}
