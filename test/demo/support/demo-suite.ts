import type { StoreSelection } from '../../../apps/demo/src/store/store-selection';
import { ACME, ADMIN, eventually, GLOBEX, INITECH, startDemo, type TaskBody } from './demo-harness';

const IN_FLIGHT = ['SUBMITTING', 'SUBMITTED', 'RUNNING'];

/**
 * The demo's e2e behaviour, run by one spec per store: the HTTP API of the real app on the
 * real store, with in-process simulated vendors.
 */
export function demoSuite(storeName: string, store: () => StoreSelection): void {
  describe(`demo app (e2e, ${storeName} store)`, () => {
    let ctx: Awaited<ReturnType<typeof startDemo>>;

    beforeAll(async () => {
      ctx = await startDemo(store());
    });

    afterAll(async () => {
      await ctx?.demo.close();
    });

    const task = async (headers: Record<string, string>, id: string): Promise<TaskBody> => {
      const res = await ctx.http().get(`/tasks/${id}`).set(headers).expect(200);
      return res.body as TaskBody;
    };
    const untilStatus = (headers: Record<string, string>, id: string, statuses: string[]) =>
      eventually(async () => {
        const t = await task(headers, id);
        return statuses.includes(t.status) ? t : undefined;
      }, `task ${id} in ${statuses.join('|')}`);
    const totalTasks = async (): Promise<number> => {
      const res = await ctx.http().get('/admin/queue/stats').set(ADMIN).expect(200);
      return Object.values(res.body.byStatus as Record<string, number>).reduce((a, b) => a + b, 0);
    };

    it('answers 400 with a clear message to a body carrying priority or tenantId, and queues nothing', async () => {
      const before = await totalTasks();
      const withPriority = await ctx.http().post('/documents').set(INITECH).send({ name: 'a.pdf', priority: 1000 }).expect(400);
      expect(withPriority.body.message).toEqual([expect.stringMatching(/^priority: .*decided by the server/)]);
      const withTenant = await ctx.http().post('/documents').set(INITECH).send({ name: 'a.pdf', tenantId: 'acme' }).expect(400);
      expect(withTenant.body.message).toEqual([expect.stringMatching(/^tenantId: .*comes from your API key/)]);
      const nested = await ctx
        .http()
        .post('/batches')
        .set(GLOBEX)
        .send({ documents: [{ name: 'ok.pdf' }, { name: 'b.pdf', priority: 5 }] })
        .expect(400);
      expect(nested.body.message).toEqual([expect.stringMatching(/^documents\.1\.priority: /)]);
      await ctx.http().post('/incidents/inc-1/recover').set(ACME).send({ priority: 1 }).expect(400);
      await ctx.http().post('/tenants/acme/reindex').set(ACME).send({ tenantId: 'globex' }).expect(400);
      await ctx.http().post('/documents').send({ name: 'no-key.pdf' }).expect(401);
      expect(await totalTasks()).toBe(before);
    });

    it('serves the dashboard behind the admin key: a header, or the password of a browser login', async () => {
      const denied = await ctx.http().get('/dashboard').expect(401);
      expect(denied.headers['www-authenticate']).toMatch(/^Basic realm=/);
      await ctx.http().get('/dashboard/api/meta').set(ACME).expect(401); // a tenant key is not the admin key
      await ctx.http().get('/dashboard').set(ADMIN).expect(200).expect('content-type', /^text\/html/);
      const basic = `Basic ${Buffer.from(`ops:${ADMIN['x-admin-key']}`).toString('base64')}`;
      const { queues } = (await ctx.http().get('/dashboard/api/queues').set({ authorization: basic }).expect(200)).body;
      expect(queues[0].name).toBe('default');
      await ctx.http().get('/dashboard/api/queues').set({ authorization: 'Basic b3BzOndyb25n' }).expect(401);
    });

    it('answers 400 to a body carrying a __proto__, constructor or prototype key at any depth, and queues nothing', async () => {
      const before = await totalTasks();
      const cases: Array<[string, Record<string, string>, string, string]> = [
        ['/documents', INITECH, '{"name":"a.pdf","__proto__":{"priority":1000}}', '__proto__'],
        ['/documents', INITECH, '{"name":"a.pdf","constructor":{"prototype":{"priority":1000}}}', 'constructor'],
        ['/batches', GLOBEX, '{"documents":[{"name":"ok.pdf"},{"name":"b.pdf","__proto__":{"pages":1}}]}', 'documents.1.__proto__'],
        ['/incidents/inc-7/recover', ACME, '{"records":["r1"],"prototype":{}}', 'prototype'],
      ];
      for (const [path, headers, raw, where] of cases) {
        const res = await ctx.http().post(path).set(headers).set('content-type', 'application/json').send(raw).expect(400);
        expect(res.body.message).toEqual([`${where}: the key "${where.split('.').pop()}" is not allowed in a request body`]);
      }
      const limits = await ctx
        .http()
        .patch('/admin/vendors/vendorA/limits')
        .set(ADMIN)
        .set('content-type', 'application/json')
        .send('{"qps":1,"constructor":{"qps":1000}}')
        .expect(400);
      expect(limits.body.message).toEqual(['constructor: the key "constructor" is not allowed in a request body']);
      expect((await ctx.http().get('/admin/limits').set(ADMIN).expect(200)).body.providers.vendorA.qps).toBe(5);
      expect(await totalTasks()).toBe(before);
    });

    it('shows a tenant only its own work on GET /queue/stats; the whole queue only on the admin route', async () => {
      await ctx.http().get('/queue/stats').expect(401);
      await ctx.http().get('/queue/stats').set(ADMIN).expect(401);
      const acmeFlow = (await ctx.http().post('/tenants/acme/reindex').set(ACME).send({}).expect(202)).body.id as string;
      const globexFlow = (await ctx.http().post('/tenants/globex/reindex').set(GLOBEX).send({}).expect(202)).body.id as string;
      await ctx.http().post('/admin/vendors/vendorB/pause').set(ADMIN).expect(200);
      try {
        await untilStatus(ACME, acmeFlow, IN_FLIGHT);
        await untilStatus(GLOBEX, globexFlow, IN_FLIGHT);
        await ctx.http().post('/documents').set(INITECH).send({ name: 'waits.pdf' }).expect(202);

        const views = {
          acme: (await ctx.http().get('/queue/stats').set(ACME).expect(200)).body,
          globex: (await ctx.http().get('/queue/stats').set(GLOBEX).expect(200)).body,
          initech: (await ctx.http().get('/queue/stats').set(INITECH).expect(200)).body,
        };
        expect(views.acme).toMatchObject({ tenant: { id: 'acme', plan: 'ENTERPRISE' }, reindexRunning: true, vendor: { name: 'vendorA', paused: false, account: 'acct-acme' } });
        expect(views.globex).toMatchObject({ tenant: { id: 'globex', plan: 'PRO' }, reindexRunning: true, vendor: { name: 'vendorB', paused: true, account: 'acct-globex' } });
        expect(views.initech).toMatchObject({ tenant: { id: 'initech', plan: 'FREE' }, reindexRunning: false, inFlight: { tasks: 0 }, vendor: { name: 'vendorB', paused: true } });
        expect(views.acme.inFlight.tasks).toBeGreaterThanOrEqual(1);
        expect(views.globex.inFlight.tasks).toBeGreaterThanOrEqual(1);
        // nothing of another tenant: no id, account id or concurrency key anywhere in the body
        for (const [me, view] of Object.entries(views)) {
          const text = JSON.stringify(view);
          for (const other of ['acme', 'globex', 'initech'].filter((t) => t !== me)) expect({ me, leaks: text.includes(other) }).toEqual({ me, leaks: false });
        }

        const all = (await ctx.http().get('/admin/queue/stats').set(ADMIN).expect(200)).body;
        expect(all.inFlight.byTenant).toMatchObject({ acme: expect.any(Number), globex: expect.any(Number) });
        expect(all.inFlight.byConcurrencyKey).toMatchObject({ 'reindex:acme': 1, 'reindex:globex': 1 });
        await ctx.http().get('/admin/queue/stats').set(GLOBEX).expect(401);
      } finally {
        await ctx.http().post('/admin/vendors/vendorB/resume').set(ADMIN).expect(200);
        for (const [headers, id] of [[ACME, acmeFlow], [GLOBEX, globexFlow]] as const) {
          await ctx.http().delete(`/tasks/${id}`).set(headers).expect(200);
          await untilStatus(headers, id, ['CANCELED']);
        }
      }
    });

    it('runs a document to SUCCEEDED with the priority of the plan, on the plan vendor', async () => {
      const free = await ctx.http().post('/documents').set(INITECH).send({ name: 'scan.pdf', pages: 3 }).expect(202);
      const ent = await ctx.http().post('/documents').set(ACME).send({ name: 'contract.pdf' }).expect(202);
      expect(free.body).toMatchObject({ priorityLevel: 'NORMAL', priority: 0, vendor: 'vendorB', tenantId: 'initech', kind: 'INTERACTIVE' });
      expect(ent.body).toMatchObject({ priorityLevel: 'HIGH', priority: 100, vendor: 'vendorA', tenantId: 'acme' });
      const doneFree = await untilStatus(INITECH, free.body.id, ['SUCCEEDED', 'FAILED']);
      const doneEnt = await untilStatus(ACME, ent.body.id, ['SUCCEEDED', 'FAILED']);
      expect(doneFree.status).toBe('SUCCEEDED');
      expect(doneFree.result).toMatchObject({ vendor: 'vendorB', pages: 3 });
      expect(doneEnt.status).toBe('SUCCEEDED');
      expect(doneEnt.result).toMatchObject({ vendor: 'vendorA', pages: 1 });
      // a tenant never sees another tenant's task
      await ctx.http().get(`/tasks/${ent.body.id}`).set(INITECH).expect(404);
    });

    it('queues archives at BATCH and incident recovery at URGENT, once per incident', async () => {
      await ctx.http().post('/admin/vendors/vendorB/pause').set(ADMIN).expect(200);
      try {
        const batch = await ctx.http().post('/batches').set(GLOBEX).send({ documents: [{ name: 'old-1.pdf' }, { name: 'old-2.pdf' }] }).expect(202);
        expect(batch.body.count).toBe(2);
        const archived = await task(GLOBEX, batch.body.taskIds[0]);
        expect(archived).toMatchObject({ priorityLevel: 'BATCH', priority: -100, kind: 'BATCH_ARCHIVE' });
        const first = await ctx.http().post('/incidents/inc-42/recover').set(INITECH).send({ records: ['r1', 'r2'] }).expect(202);
        const again = await ctx.http().post('/incidents/inc-42/recover').set(INITECH).send({}).expect(202);
        expect(first.body).toMatchObject({ priorityLevel: 'URGENT', priority: 1000, kind: 'INCIDENT_RECOVERY' });
        expect(again.body.id).toBe(first.body.id);
        const stats = await ctx.http().get('/admin/queue/stats').set(ADMIN).expect(200);
        const levels = (stats.body.pending as Array<{ level: string; count: number }>).map((p) => p.level);
        expect(levels).toEqual(expect.arrayContaining(['URGENT', 'BATCH']));
        expect(levels.indexOf('URGENT')).toBeLessThan(levels.indexOf('BATCH'));
      } finally {
        await ctx.http().post('/admin/vendors/vendorB/resume').set(ADMIN).expect(200);
      }
    });

    it('pauses vendor B through the admin API while vendor A keeps working, then resumes it', async () => {
      await ctx.http().post('/admin/vendors/vendorB/pause').expect(401);
      await ctx.http().post('/admin/vendors/vendorB/pause').set(INITECH).expect(401);
      await ctx.http().post('/admin/vendors/vendorB/pause').set(ADMIN).expect(200);
      const onB = await ctx.http().post('/documents').set(INITECH).send({ name: 'waits.pdf' }).expect(202);
      const onA = await ctx.http().post('/documents').set(ACME).send({ name: 'runs.pdf' }).expect(202);
      expect((await untilStatus(ACME, onA.body.id, ['SUCCEEDED', 'FAILED'])).status).toBe('SUCCEEDED');
      expect((await task(INITECH, onB.body.id)).status).toBe('PENDING_SUBMIT');
      const paused = await ctx.http().get('/queue/stats').set(INITECH).expect(200);
      expect(paused.body.vendor).toMatchObject({ name: 'vendorB', paused: true });
      expect((await ctx.http().get('/admin/queue/stats').set(ADMIN).expect(200)).body.pausedVendors).toEqual(['vendorB']);
      const limits = await ctx.http().post('/admin/vendors/vendorB/resume').set(ADMIN).expect(200);
      expect(limits.body.providers.vendorB.paused).toBe(false);
      expect((await untilStatus(INITECH, onB.body.id, ['SUCCEEDED', 'FAILED'])).status).toBe('SUCCEEDED');
    });

    it('changes vendor limits at runtime through the admin API and rejects bad values', async () => {
      const set = await ctx.http().patch('/admin/vendors/vendorA/limits').set(ADMIN).send({ qps: 4, accountConcurrency: 1 }).expect(200);
      expect(set.body.providers.vendorA).toMatchObject({ qps: 4, accountConcurrency: 1 });
      await ctx.http().patch('/admin/vendors/vendorA/limits').set(ADMIN).send({ qps: -1 }).expect(400);
      await ctx.http().patch('/admin/vendors/nope/limits').set(ADMIN).send({ qps: 1 }).expect(404);
      const back = await ctx.http().patch('/admin/vendors/vendorA/limits').set(ADMIN).send({ qps: 5, accountConcurrency: 2 }).expect(200);
      expect(back.body.providers.vendorA).toMatchObject({ qps: 5, accountConcurrency: 2 });
    });

    it('never runs two re-index flows of one tenant at once, but runs those of different tenants together', async () => {
      await ctx.http().post('/tenants/globex/reindex').set(ACME).send({}).expect(403);
      const a1 = (await ctx.http().post('/tenants/acme/reindex').set(ACME).send({ reason: 'schema change' }).expect(202)).body.id as string;
      const a2 = (await ctx.http().post('/tenants/acme/reindex').set(ACME).send({}).expect(202)).body.id as string;
      const g1 = (await ctx.http().post('/tenants/globex/reindex').set(GLOBEX).send({}).expect(202)).body.id as string;

      // globex's flow runs while one of acme's runs: different tenants run at once
      await untilStatus(GLOBEX, g1, IN_FLIGHT);
      const runningA = await eventually(async () => {
        const [t1, t2] = [await task(ACME, a1), await task(ACME, a2)];
        const running = [t1, t2].filter((t) => IN_FLIGHT.includes(t.status));
        return running.length >= 1 ? { running, t1, t2 } : undefined;
      }, 'one acme re-index running');
      // ...and the other acme flow waits for it (the rebuild takes a minute)
      expect(runningA.running).toHaveLength(1);
      const first = runningA.running[0].id;
      const second = first === a1 ? a2 : a1;
      expect((await task(ACME, second)).status).toBe('PENDING_SUBMIT');
      const stats = await ctx.http().get('/admin/queue/stats').set(ADMIN).expect(200);
      expect(stats.body.inFlight.byConcurrencyKey).toMatchObject({ 'reindex:acme': 1, 'reindex:globex': 1 });

      // cancelling the running one lets the waiting one start
      await ctx.http().delete(`/tasks/${first}`).set(ACME).expect(200);
      expect((await untilStatus(ACME, first, ['CANCELED'])).status).toBe('CANCELED');
      await untilStatus(ACME, second, IN_FLIGHT);

      const peaks = await ctx.http().get('/admin/vendors').set(ADMIN).expect(200);
      expect(peaks.body.reindex.byTenant).toEqual({ acme: 1, globex: 1 });
      expect(peaks.body.reindex.overall).toBeGreaterThanOrEqual(2);

      for (const [headers, id] of [[ACME, second], [GLOBEX, g1]] as const) {
        await ctx.http().delete(`/tasks/${id}`).set(headers).expect(200);
        await untilStatus(headers, id, ['CANCELED']);
      }
    });

    it('enqueues the nightly archive of every tenant at BATCH priority, once per night', async () => {
      const before = await totalTasks();
      const run = await ctx.http().post('/admin/archive/run').set(ADMIN).send({ documentsPerTenant: 3 }).expect(202);
      expect(run.body.queued).toEqual({ acme: 3, globex: 3, initech: 3 });
      await ctx.http().post('/admin/archive/run').set(ADMIN).send({ documentsPerTenant: 3 }).expect(202);
      expect(await totalTasks()).toBe(before + 9);
      const timeline = await ctx.http().get('/admin/timeline').set(ADMIN).expect(200);
      const archived = (timeline.body as Array<{ kind: string; priority: number }>).filter((e) => e.kind === 'BATCH_ARCHIVE');
      expect(archived.length).toBeGreaterThanOrEqual(9);
      expect(new Set(archived.map((e) => e.priority))).toEqual(new Set([-100]));
    });
  });
}
