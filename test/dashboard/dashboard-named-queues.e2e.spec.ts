import { Module, type INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import request from 'supertest';
import { PriorityQueueModule, PriorityQueueRegistry, memoryStore } from 'nestjs-priority-queue';
import { Messages } from '../../libs/priority-queue/src/core';
import { DASHBOARD_WRITE_HEADER, PriorityQueueDashboardModule } from 'nestjs-priority-queue/dashboard';
import { ADMIN_KEY, TestAdminGuard } from './support/dashboard-app';

const KEY = { 'x-admin-key': ADMIN_KEY };

@Module({
  imports: [
    PriorityQueueModule.forRoot({ store: memoryStore(), workers: { enabled: false }, taskTypes: [{ type: 'ocr', providerKey: 'vendorA' }] }),
    PriorityQueueModule.registerQueue({ name: 'reports', taskTypes: [{ type: 'pdf', providerKey: 'vendorA' }] }),
    PriorityQueueDashboardModule.forRoot({ guard: TestAdminGuard }),
  ],
})
class AppModule {}

/** Every queue of the application (PriorityQueueRegistry) is on the dashboard, each on its own. */
describe('dashboard with named queues (memory store)', () => {
  let app: INestApplication;
  let registry: PriorityQueueRegistry;
  const http = () => request(app.getHttpServer());

  beforeAll(async () => {
    app = await NestFactory.create(AppModule, { logger: false });
    await app.init();
    registry = app.get(PriorityQueueRegistry);
    for (let i = 0; i < 3; i++) await registry.taskManager('default').submit({ type: 'ocr', payload: { i } });
    for (let i = 0; i < 5; i++) await registry.taskManager('reports').submit({ type: 'pdf', payload: { i }, priority: i });
  });
  afterAll(async () => {
    await app?.close();
  });

  it('lists every queue with its own counts and task types', async () => {
    const meta = (await http().get('/dashboard/api/meta').set(KEY).expect(200)).body;
    expect(meta.queues).toMatchObject([
      { name: 'default', taskTypes: [{ type: 'ocr', providerKey: 'vendorA' }] },
      { name: 'reports', taskTypes: [{ type: 'pdf', providerKey: 'vendorA' }] },
    ]);
    const { queues } = (await http().get('/dashboard/api/queues').set(KEY).expect(200)).body;
    expect(queues.map((q: { name: string; byStatus: { PENDING_SUBMIT: number } }) => [q.name, q.byStatus.PENDING_SUBMIT])).toEqual([
      ['default', 3],
      ['reports', 5],
    ]);
    const reports = (await http().get('/dashboard/api/queues/reports/tasks').set(KEY).expect(200)).body;
    expect(reports.tasks).toHaveLength(5);
    expect(new Set(reports.tasks.map((t: { type: string }) => t.type))).toEqual(new Set(['pdf']));
  });

  it('changes the limits of the queue it is asked to, and no other', async () => {
    await http().post('/dashboard/api/queues/reports/providers/vendorA/pause').set({ ...KEY, [DASHBOARD_WRITE_HEADER]: '1' }).expect(200);
    expect((await registry.admissionGuard('reports').getLimits()).providers.vendorA.paused).toBe(true);
    expect((await registry.admissionGuard('default').getLimits()).providers.vendorA?.paused ?? false).toBe(false);
  });

  it('answers 400 for a queue the application does not have, naming the ones it has', async () => {
    const res = await http().get('/dashboard/api/queues/nope/limits').set(KEY).expect(400);
    expect(res.body).toMatchObject({ error: 'QueueNotFoundError', message: Messages.queueNotFound('nope', ['default', 'reports']) });
  });
});
