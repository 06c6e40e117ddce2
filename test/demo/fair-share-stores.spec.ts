import IORedis from 'ioredis';
import { DataSource } from 'typeorm';
import { loadDemoConfig } from '../../apps/demo/src/config/load-demo-config';
import { FAIR_SHARE_STORES, fairShareOn } from '../../apps/demo/src/fairness/fair-share';
import { STORE_KINDS, type StoreSelection } from '../../apps/demo/src/store/store-selection';
import type { TaskStore } from '../../libs/priority-queue/src/core/task-store.port';
import { MemoryTaskStore } from '../../libs/priority-queue/src/stores/memory';
import { RedisTaskStore } from '../../libs/priority-queue/src/stores/redis/redis-task-store';
import { TypeOrmTaskStore } from '../../libs/priority-queue/src/stores/typeorm';

/**
 * The demo turns fair share on (DEMO_FAIR_SHARE=auto) on the stores listed in FAIR_SHARE_STORES.
 * That list must say what the library's stores implement (TaskStore.policies.fairness): a store
 * that gains fair share fails this test until the demo uses it there too. Nothing connects: the
 * stores are only constructed (an ioredis client with lazyConnect, DataSources not initialised).
 */
describe('demo: the stores it runs with fair share', () => {
  const typeorm = (options: ConstructorParameters<typeof DataSource>[0]) => new TypeOrmTaskStore({ dataSource: new DataSource(options) });
  const stores: Record<StoreSelection['kind'], () => { store: TaskStore; dispose(): void }> = {
    memory: () => ({ store: new MemoryTaskStore(), dispose: () => undefined }),
    redis: () => {
      const connection = new IORedis({ lazyConnect: true });
      return { store: new RedisTaskStore({ connection }), dispose: () => connection.disconnect() };
    },
    sqlite: () => ({ store: typeorm({ type: 'better-sqlite3', database: ':memory:' }), dispose: () => undefined }),
    postgres: () => ({ store: typeorm({ type: 'postgres', url: 'postgres://demo@127.0.0.1:1/demo' }), dispose: () => undefined }),
    mysql: () => ({ store: typeorm({ type: 'mysql', url: 'mysql://demo@127.0.0.1:1/demo' }), dispose: () => undefined }),
  };

  it.each(STORE_KINDS.map((k) => [k]))('lists %s exactly when its store implements fair share (apps/demo/src/fairness/fair-share.ts FAIR_SHARE_STORES)', (kind) => {
    const made = stores[kind]();
    try {
      expect({ kind, listed: FAIR_SHARE_STORES.has(kind) }).toEqual({ kind, listed: made.store.policies?.fairness === true });
    } finally {
      made.dispose();
    }
  });

  it('auto follows the list, on and off are what they say', () => {
    expect(fairShareOn('auto', { kind: 'memory' })).toBe(FAIR_SHARE_STORES.has('memory'));
    expect(fairShareOn('auto', { kind: 'redis', url: 'redis://x' })).toBe(FAIR_SHARE_STORES.has('redis'));
    expect(fairShareOn('on', { kind: 'redis', url: 'redis://x' })).toBe(true);
    expect(fairShareOn('off', { kind: 'memory' })).toBe(false);
  });
});

describe('demo config: DEMO_FAIR_SHARE and DEMO_PLAN_WEIGHTS', () => {
  it('defaults to auto and the plan weights FREE 1, PRO 2, ENTERPRISE 3; a JSON object replaces the plans it names', () => {
    expect(loadDemoConfig({}).fairShare).toEqual({ setting: 'auto', weightsByPlan: { FREE: 1, PRO: 2, ENTERPRISE: 3 } });
    const equal = loadDemoConfig({ DEMO_FAIR_SHARE: ' OFF ', DEMO_PLAN_WEIGHTS: '{"PRO":1,"ENTERPRISE":1}' }).fairShare;
    expect(equal).toEqual({ setting: 'off', weightsByPlan: { FREE: 1, PRO: 1, ENTERPRISE: 1 } });
  });

  it('refuses anything else with a message that says what is allowed', () => {
    expect(() => loadDemoConfig({ DEMO_FAIR_SHARE: 'yes' })).toThrow('DEMO_FAIR_SHARE must be one of auto, on, off; got "yes"');
    for (const raw of ['{"PRO":0}', '{"PRO":1001}', '{"PRO":1.5}', '{"GOLD":2}', '[1]', 'null', '{PRO:2}']) {
      expect(() => loadDemoConfig({ DEMO_PLAN_WEIGHTS: raw })).toThrow(/^DEMO_PLAN_WEIGHTS must be a JSON object: each key a plan \(FREE\|PRO\|ENTERPRISE\), each value an integer from 1 to 1000/);
    }
  });
});
