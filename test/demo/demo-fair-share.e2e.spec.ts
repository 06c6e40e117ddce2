import { DEFAULT_PLAN_WEIGHTS, FAIR_SHARE_STORES, type FairShareSetting } from '../../apps/demo/src/fairness/fair-share';
import { Plan } from '../../apps/demo/src/priority/plan';
import type { StoreSelection } from '../../apps/demo/src/store/store-selection';
import { startRedisServer, type RedisServerHandle } from '../support/servers/redis-server';
import { ADMIN, eventually, GLOBEX, INITECH, startDemo } from './support/demo-harness';

interface Started {
  taskId: string;
  tenantId: string;
  startedSeq: number | null;
}

/**
 * The demo's fair share on the `ocr` queue (DEMO_FAIR_SHARE=auto): on a store that implements it
 * (FAIR_SHARE_STORES), archive jobs of two tenants at the same priority level start interleaved
 * in proportion to their plans' weights, not one tenant's batch first; with DEMO_FAIR_SHARE=off
 * (or on a store without it) the demo still runs, in submit order. Order only (the timeline's start sequence), no times. Every
 * store the demo's e2e runs on: memory and Redis.
 */
function fairShareSuite(kind: StoreSelection['kind'], store: () => StoreSelection, setting: FairShareSetting = 'auto'): void {
  // on exactly where the store implements it (auto), or as DEMO_FAIR_SHARE says
  const enabled = setting === 'on' || (setting === 'auto' && FAIR_SHARE_STORES.has(kind));
  describe(`demo app: fair share between tenants on the archive (e2e, ${kind} store, DEMO_FAIR_SHARE=${setting})`, () => {
    let ctx: Awaited<ReturnType<typeof startDemo>>;

    beforeAll(async () => {
      ctx = await startDemo(store(), { fairShare: { setting, weightsByPlan: DEFAULT_PLAN_WEIGHTS } });
    });

    afterAll(async () => {
      await ctx?.demo.close();
    });

    const archive = async (headers: Record<string, string>, prefix: string, n: number): Promise<string[]> => {
      const documents = Array.from({ length: n }, (_, i) => ({ name: `${prefix}-${i + 1}.pdf` }));
      return (await ctx.http().post('/batches').set(headers).send({ documents }).expect(202)).body.taskIds as string[];
    };

    /** The PRO tenant's 30 archive jobs, then the FREE tenant's 30, queued while vendor B is paused; their tenants in start order. */
    const startOrder = async (): Promise<string[]> => {
      await ctx.http().post('/admin/vendors/vendorB/pause').set(ADMIN).expect(200);
      const pro = await archive(GLOBEX, 'fair-pro', 30);
      const free = await archive(INITECH, 'fair-free', 30);
      await ctx.http().post('/admin/vendors/vendorB/resume').set(ADMIN).expect(200);
      const ours = new Set([...pro, ...free]);
      const started = await eventually(async () => {
        const list = ((await ctx.http().get('/admin/timeline').set(ADMIN).expect(200)).body as Started[]).filter((e) => ours.has(e.taskId));
        return list.length === ours.size && list.every((e) => e.startedSeq !== null) ? list : undefined;
      }, 'all 60 archive jobs started', 30_000);
      return started.sort((a, b) => a.startedSeq! - b.startedSeq!).map((e) => e.tenantId);
    };

    if (!enabled) {
      it('runs without fair share: archive jobs start in submit order, no weights set', async () => {
        expect((await ctx.http().get('/admin/limits').set(ADMIN).expect(200)).body.tenantWeights).toEqual({});
        expect(await startOrder()).toEqual([...Array(30).fill('globex'), ...Array(30).fill('initech')]);
      });

      it('refuses a tenant weight through the admin route with the reason, and changes nothing', async () => {
        const res = await ctx.http().put('/admin/tenants/initech/weight').set(ADMIN).send({ weight: 3 });
        // a store with fair share, queue without it: 400; a store without fair share: 409
        const expected = FAIR_SHARE_STORES.has(kind) ? { status: 400, error: 'ValidationError' } : { status: 409, error: 'NotSupportedByStoreError' };
        expect({ status: res.status, error: res.body.error }).toEqual(expected);
        expect(res.body.message).toMatch(/weight/);
        expect((await ctx.http().get('/admin/limits').set(ADMIN).expect(200)).body.tenantWeights).toEqual({});
      });
      return;
    }

    it("starts a FREE tenant's archive jobs between a PRO tenant's batch submitted before them, by the plans' weights", async () => {
      const limits = await ctx.http().get('/admin/limits').set(ADMIN).expect(200);
      expect(limits.body.tenantWeights).toMatchObject({ globex: DEFAULT_PLAN_WEIGHTS[Plan.PRO], initech: DEFAULT_PLAN_WEIGHTS[Plan.FREE] });
      const weight: Record<string, number> = { globex: DEFAULT_PLAN_WEIGHTS[Plan.PRO], initech: DEFAULT_PLAN_WEIGHTS[Plan.FREE] };
      const order = await startOrder();

      // without fair share: 30 x globex, then 30 x initech. With it, the FREE tenant's first job
      // starts right after the PRO tenant's first `weight` ones ...
      expect(order.indexOf('initech')).toBe(weight.globex);
      // ... and at every point while both have jobs waiting, each tenant's started jobs divided by
      // its weight differ by at most one job (start-time fair queuing's bound)
      const count: Record<string, number> = { globex: 0, initech: 0 };
      for (const tenant of order) {
        count[tenant]++;
        if (count.globex === 30 || count.initech === 30) break;
        expect(Math.abs(count.globex / weight.globex - count.initech / weight.initech)).toBeLessThanOrEqual(1);
      }
      // the PRO tenant's batch is not done first: FREE jobs started before its last one
      expect(order.lastIndexOf('globex')).toBeGreaterThan(order.indexOf('initech'));
    });

    it('changes a tenant weight at runtime through the admin route (1..1000, null = 1); the next batches follow it', async () => {
      await ctx.http().put('/admin/tenants/nobody/weight').set(ADMIN).send({ weight: 2 }).expect(404);
      await ctx.http().put('/admin/tenants/initech/weight').set(ADMIN).send({ weight: 0 }).expect(400);
      await ctx.http().put('/admin/tenants/initech/weight').set(ADMIN).send({ weight: '2' }).expect(400);
      await ctx.http().put('/admin/tenants/initech/weight').set(INITECH).send({ weight: 2 }).expect(401);
      const set = await ctx.http().put('/admin/tenants/initech/weight').set(ADMIN).send({ weight: DEFAULT_PLAN_WEIGHTS[Plan.PRO] }).expect(200);
      expect(set.body.tenantWeights.initech).toBe(DEFAULT_PLAN_WEIGHTS[Plan.PRO]);
      // equal weights now: the two tenants alternate
      const order = await startOrder();
      for (let i = 0; i < 40; i += 2) expect([order[i], order[i + 1]].sort()).toEqual(['globex', 'initech']);
      const reset = await ctx.http().put('/admin/tenants/initech/weight').set(ADMIN).send({ weight: null }).expect(200);
      expect(reset.body.tenantWeights.initech).toBeUndefined();
    });
  });
}

let redis: RedisServerHandle;

beforeAll(async () => {
  redis = await startRedisServer();
});

afterAll(async () => {
  await redis?.stop();
});

fairShareSuite('memory', () => ({ kind: 'memory' }));
fairShareSuite('redis', () => ({ kind: 'redis', url: redis.url }));
fairShareSuite('memory', () => ({ kind: 'memory' }), 'off');
