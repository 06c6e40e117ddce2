import { PriorityQueueRegistry } from 'nestjs-priority-queue';
import { ACME, ADMIN, eventually, startDemo } from './support/demo-harness';

/** The demo's named queues (`ocr`, `maintenance`) and its /health route, on the memory store. */
describe('demo app: named queues and /health (e2e, memory store)', () => {
  let ctx: Awaited<ReturnType<typeof startDemo>>;

  beforeAll(async () => {
    ctx = await startDemo({ kind: 'memory' });
  });

  afterAll(async () => {
    await ctx?.demo.close();
  });

  it('puts documents in the ocr queue and re-index flows in the maintenance queue', async () => {
    const registry = ctx.app.get(PriorityQueueRegistry);
    expect(registry.names()).toEqual(expect.arrayContaining(['ocr', 'maintenance']));
    const doc = (await ctx.http().post('/documents').set(ACME).send({ name: 'q.pdf' }).expect(202)).body.id as string;
    const flow = (await ctx.http().post('/tenants/acme/reindex').set(ACME).send({}).expect(202)).body.id as string;
    expect(await registry.taskManager('ocr').get(doc)).not.toBeNull();
    expect(await registry.taskManager('maintenance').get(doc)).toBeNull();
    expect(await registry.taskManager('maintenance').get(flow)).not.toBeNull();
    // /tasks/:id finds a task whatever its queue
    await ctx.http().get(`/tasks/${flow}`).set(ACME).expect(200);
    await ctx.http().delete(`/tasks/${flow}`).set(ACME).expect(200);
    await eventually(async () => (await registry.taskManager('maintenance').get(flow))?.status === 'CANCELED', 'the cancelled flow');
    // vendor limits live in the ocr queue
    const limits = await ctx.http().get('/admin/limits').set(ADMIN).expect(200);
    expect(Object.keys(limits.body.providers)).toEqual(expect.arrayContaining(['vendorA', 'vendorB']));
    expect(Object.keys((await registry.admissionGuard('maintenance').getLimits()).providers)).toEqual([]);
  });

  it('answers GET /health without a key: every queue up, with its worker', async () => {
    const res = await ctx.http().get('/health').expect(200);
    expect(res.body.status).toBe('ok');
    expect(res.body.info.queues.queues).toMatchObject({
      ocr: { store: 'up', workers: 'running' },
      maintenance: { store: 'up', workers: 'running' },
      default: { store: 'up', workers: 'none' },
    });
  });
});
