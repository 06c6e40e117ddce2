import Redis from 'ioredis';
import request from 'supertest';
import { RedisTaskStore } from 'nestjs-priority-queue/redis';
import { startRedisServer, type RedisServerHandle } from '../support/servers/redis-server';
import { dashboardApiSuite } from './support/dashboard-api.suite';
import { ADMIN_KEY, TestAdminGuard, seedTasks, startDashboardApp } from './support/dashboard-app';

let server: RedisServerHandle;
let connection: Redis;
let n = 0;

beforeAll(async () => {
  server = await startRedisServer();
  connection = new Redis(server.url, { maxRetriesPerRequest: 3 });
}, 120_000);

afterAll(async () => {
  connection?.disconnect();
  await server?.stop();
});

// Redis keeps no history unless asked (historyLimit defaults to 0): the dashboard says so
dashboardApiSuite('redis', async () => new RedisTaskStore({ connection, prefix: `dash${++n}:` }), { history: false });

describe('dashboard JSON API (redis store, historyLimit 3)', () => {
  it("lists a task's last kept transitions, the oldest ones dropped", async () => {
    const d = await startDashboardApp(new RedisTaskStore({ connection, prefix: `dash${++n}:`, historyLimit: 3 }), { guard: TestAdminGuard });
    try {
      const seeded = await seedTasks(d.tasks, d.store, d.admission);
      await d.tasks.retry(seeded.failed.id); // the fourth transition: the creation drops out
      const res = await request(d.app.getHttpServer()).get(`/dashboard/api/queues/default/tasks/${seeded.failed.id}`).set({ 'x-admin-key': ADMIN_KEY }).expect(200);
      expect(res.body.timeline).toMatchObject({ source: 'history', historyLimit: 3 });
      expect(res.body.timeline.entries.map((e: { from: string | null; to: string; label: string }) => [e.from, e.to, e.label])).toEqual([
        ['PENDING_SUBMIT', 'SUBMITTING', 'claimed by a worker'],
        ['SUBMITTING', 'FAILED', ''],
        ['FAILED', 'PENDING_SUBMIT', 'retried from the dashboard or the API'],
      ]);
      expect(res.body.timeline.entries[1].error).toBe('vendor answered 500 five times');
    } finally {
      await d.close();
    }
  });
});
