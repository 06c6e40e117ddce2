import { request as httpRequest } from 'node:http';
import request from 'supertest';
import { Messages, TaskStatus, compareOrder, type OrderFields, type TaskStore } from '../../../libs/priority-queue/src/core';
import { DASHBOARD_WRITE_HEADER, PriorityQueueDashboardModule } from 'nestjs-priority-queue/dashboard';
import { ADMIN_KEY, TestAdminGuard, seedTasks, startDashboardApp, type DashboardApp, type SeededTasks } from './dashboard-app';

const API = '/dashboard/api';
const KEY = { 'x-admin-key': ADMIN_KEY };
const WRITE = { ...KEY, [DASHBOARD_WRITE_HEADER]: '1' };

/**
 * The dashboard's JSON API end to end (a real Nest app on a real store, HTTP through supertest):
 * the guard, read-only mode, every read and change, and the 400s of bad input. `history`: whether
 * the stores of `newStore` keep transitions (historyLimit > 0); the task timeline differs.
 */
export function dashboardApiSuite(storeName: string, newStore: () => Promise<TaskStore>, { history }: { history: boolean }): void {
  describe(`dashboard JSON API (${storeName} store, history ${history ? 'on' : 'off'})`, () => {
    let d: DashboardApp;
    let seeded: SeededTasks;
    const http = () => request(d.app.getHttpServer());

    beforeEach(async () => {
      d = await startDashboardApp(await newStore(), { guard: TestAdminGuard, refreshMs: 500 });
      seeded = await seedTasks(d.tasks, d.store, d.admission);
    });
    afterEach(async () => {
      await d?.close();
    });

    it('runs the app guard on the page, its files, the API and the live stream', async () => {
      for (const path of ['/dashboard', '/dashboard/app.js', `${API}/meta`, `${API}/queues`, `${API}/queues/default/tasks`, `${API}/events`]) {
        const res = await http().get(path);
        expect({ path, status: res.status }).toEqual({ path, status: 401 });
      }
      await http().post(`${API}/queues/default/providers/vendorA/pause`).set({ [DASHBOARD_WRITE_HEADER]: '1' }).expect(401);
      expect((await d.admission.getLimits()).providers.vendorA.paused).toBe(false);
      await http().get('/dashboard').set({ 'x-admin-key': 'wrong' }).expect(401);
    });

    it('serves the page with its own script and stylesheet, nothing inline, nothing from elsewhere', async () => {
      const res = await http().get('/dashboard').set(KEY).expect(200);
      expect(res.headers['content-type']).toMatch(/^text\/html/);
      expect(res.headers['content-security-policy']).toContain("script-src 'self'");
      expect(res.text).toMatch(/<script defer src="dashboard\/app\.js\?v=[0-9a-f]{12}"><\/script>/);
      expect(res.text).not.toMatch(/https?:\/\//);
      expect(res.text).not.toMatch(/<script>[^<]/);
      const slash = await http().get('/dashboard/').set(KEY).expect(200);
      expect(slash.text).toContain('src="./app.js?v=');
      const js = await http().get('/dashboard/app.js').set(KEY).expect(200);
      expect(js.headers['content-type']).toMatch(/^text\/javascript/);
      expect(js.text).not.toMatch(/https?:\/\/(?!www\.w3\.org\/2000\/svg)/);
      await http().get('/dashboard/app.css').set(KEY).expect(200).expect('content-type', /^text\/css/);
    });

    it('describes the queues: counts per status, pending per priority, workers holding leases', async () => {
      const meta = (await http().get(`${API}/meta`).set(KEY).expect(200)).body;
      expect(meta).toMatchObject({ readOnly: false, queues: [{ name: 'default' }] });
      expect(meta.queues[0].taskTypes).toEqual(expect.arrayContaining([{ type: 'ocr', providerKey: 'vendorA' }]));
      const { queues } = (await http().get(`${API}/queues`).set(KEY).expect(200)).body;
      const stats = await d.tasks.stats();
      expect(queues).toHaveLength(1);
      expect(queues[0].byStatus).toEqual(stats.byStatus);
      expect(queues[0].byStatus).toMatchObject({ PENDING_SUBMIT: 9, SUBMITTING: 2, RUNNING: 1, SUBMITTED: 1, SUCCEEDED: 1, FAILED: 1, CANCELED: 1 });
      expect(queues[0].pending.map((p: { priority: number }) => p.priority)).toEqual([10_000, 100, 50, 5, 0, -3]);
      expect(queues[0].workers).toEqual([{ owner: 'worker-1', leases: 2, lastSeenAt: null }]);
      expect(queues[0].leaseScanCapped).toBe(false);
      expect(queues[0].throughput.buckets).toHaveLength(60);
    });

    it('shows limits against what is in flight, for every provider, account, tenant and key', async () => {
      const v = (await http().get(`${API}/queues/default/limits`).set(KEY).expect(200)).body;
      expect(v.providers.map((p: { providerKey: string }) => p.providerKey)).toEqual(['mailer', 'search', 'vendorA']);
      expect(v.providers[2]).toMatchObject({ providerKey: 'vendorA', paused: false, qps: 5, burst: 2, accountConcurrency: 2, inFlight: 4 });
      expect(v.accounts.rows).toEqual(
        expect.arrayContaining([expect.objectContaining({ providerKey: 'vendorA', accountId: 'acct-0', inFlight: 2, limit: 2, full: true, override: false })]),
      );
      expect(v.tenants.defaultQuota).toBe(10);
      expect(v.tenants.rows).toEqual(expect.arrayContaining([{ key: 'tenant-1', inFlight: 2, limit: 3, override: true, full: false }]));
      expect(v.concurrencyKeys.rows).toEqual([{ key: 'reindex:tenant-2', inFlight: 0, limit: 2, override: true, full: false }]);
    });

    it('pages through the pending tasks in claim order, each exactly once, and finds one by id or key', async () => {
      const seen: string[] = [];
      let cursor: string | null = null;
      let pages = 0;
      do {
        const res: request.Response = await http()
          .get(`${API}/queues/default/tasks`)
          .query({ status: 'PENDING_SUBMIT', limit: 4, ...(cursor ? { cursor } : {}) })
          .set(KEY)
          .expect(200);
        for (const t of res.body.tasks) {
          expect(t.status).toBe('PENDING_SUBMIT');
          expect(t).not.toHaveProperty('payload');
          expect(t).not.toHaveProperty('leaseId');
          seen.push(t.id);
        }
        cursor = res.body.nextCursor;
        pages++;
      } while (cursor);
      expect(pages).toBe(3);
      // the due ones as the queue will claim them, then the one not due yet
      expect(seen).toEqual([...seeded.pendingInClaimOrder.map((t) => t.id), seeded.delayed.id]);

      const failed = (await http().get(`${API}/queues/default/tasks?status=FAILED`).set(KEY).expect(200)).body;
      expect(failed.tasks.map((t: { id: string; error: string }) => [t.id, t.error])).toEqual([[seeded.failed.id, 'vendor answered 500 five times']]);
      // a search looks in every status
      const found = (await http().get(`${API}/queues/default/tasks`).query({ search: seeded.running.id }).set(KEY).expect(200)).body;
      expect(found.tasks.map((t: { id: string }) => t.id)).toEqual([seeded.running.id]);
      const none = (await http().get(`${API}/queues/default/tasks`).query({ search: 'no-such-task' }).set(KEY).expect(200)).body;
      expect(none.tasks).toEqual([]);
      const byKey = (await http().get(`${API}/queues/default/tasks`).query({ search: 'seed-3' }).set(KEY).expect(200)).body;
      expect(byKey.tasks.map((t: { idempotencyKey: string }) => t.idempotencyKey)).toEqual(['seed-3']);
      // one task's id is another's idempotency key, both pending: the search shows both
      const first = seeded.pendingInClaimOrder[0];
      const namesake = await d.tasks.submit({ type: 'email', payload: { n: 'namesake' }, idempotencyKey: first.id, delayMs: 60_000 });
      const both = (await http().get(`${API}/queues/default/tasks`).query({ search: first.id }).set(KEY).expect(200)).body;
      expect(both.tasks.map((t: { id: string }) => t.id).sort()).toEqual([first.id, namesake.id].sort());
    });

    it('filters by type, tenant, provider, account and priority range, in claim order', async () => {
      const get = async (query: Record<string, string | number>) =>
        (await http().get(`${API}/queues/default/tasks`).query({ status: 'PENDING_SUBMIT', ...query }).set(KEY).expect(200)).body.tasks.map((t: { id: string }) => t.id);
      const expect_ = (pick: (t: SeededTasks['delayed']) => boolean) => seeded.pendingInClaimOrder.filter(pick).map((t) => t.id);
      expect(await get({ type: 'ocr' })).toEqual(expect_((t) => t.type === 'ocr'));
      expect(await get({ tenantId: 'tenant-1' })).toEqual(expect_((t) => t.tenantId === 'tenant-1'));
      expect(await get({ providerKey: 'search' })).toEqual(expect_((t) => t.providerKey === 'search'));
      expect(await get({ providerKey: 'vendorA', accountId: 'acct-0' })).toEqual(expect_((t) => t.providerKey === 'vendorA' && t.accountId === 'acct-0'));
      expect(await get({ minPriority: 5, maxPriority: 50 })).toEqual(expect_((t) => t.priority >= 5 && t.priority <= 50));
      const failedOcr = (await http().get(`${API}/queues/default/tasks`).query({ status: 'FAILED', type: 'email' }).set(KEY).expect(200)).body;
      expect(failedOcr.tasks).toEqual([]);
      const terminal = (await http().get(`${API}/queues/default/tasks`).query({ status: 'SUCCEEDED' }).set(KEY).expect(200)).body;
      expect(terminal).toMatchObject({ order: 'newest', tasks: [{ id: seeded.succeeded.id }] });
    });

    it('shows one task with its fields, its timeline and the actions that apply', async () => {
      const failed = (await http().get(`${API}/queues/default/tasks/${seeded.failed.id}`).set(KEY).expect(200)).body;
      expect(failed.task).toMatchObject({ id: seeded.failed.id, status: 'FAILED', payload: { doc: 'claimed-3' }, error: 'vendor answered 500 five times' });
      expect(failed.task).not.toHaveProperty('leaseId');
      expect(d.store.historyLimit > 0).toBe(history);
      if (history) {
        expect(failed.timeline).toMatchObject({ source: 'history', historyLimit: d.store.historyLimit });
        expect(failed.timeline.entries.map((e: { from: string | null; to: string }) => [e.from, e.to])).toEqual([
          [null, 'PENDING_SUBMIT'],
          ['PENDING_SUBMIT', 'SUBMITTING'],
          ['SUBMITTING', 'FAILED'],
        ]);
        expect(failed.timeline.entries[2]).toMatchObject({ error: 'vendor answered 500 five times' });
      } else {
        // history off: no list of transitions, the times the task records instead
        expect(failed.timeline).toMatchObject({ source: 'off', historyLimit: 0 });
        expect(failed.timeline.entries.map((e: { label: string; to?: string }) => [e.label, e.to])).toEqual([
          ['created', 'PENDING_SUBMIT'],
          ['finished', 'FAILED'],
        ]);
        expect(failed.timeline.entries[1]).toMatchObject({ at: failed.task.finishedAt, error: 'vendor answered 500 five times' });
      }
      expect(failed.explanation).toBeNull();
      expect(failed.actions).toEqual({ cancel: false, changePriority: false, retry: true });
      const pending = (await http().get(`${API}/queues/default/tasks/${seeded.pendingInClaimOrder[0].id}`).set(KEY).expect(200)).body;
      expect(pending.actions).toEqual({ cancel: true, changePriority: true, retry: false });
      expect(pending.explanation).toMatchObject({ id: seeded.pendingInClaimOrder[0].id, verdict: expect.stringMatching(/^(next|waiting|refused)$/) });
      const { now: _now, ...explained } = await d.tasks.explain(seeded.pendingInClaimOrder[0].id);
      expect(pending.explanation).toMatchObject(explained);
      const delayed = (await http().get(`${API}/queues/default/tasks/${seeded.delayed.id}`).set(KEY).expect(200)).body;
      expect(delayed.explanation).toMatchObject({ verdict: 'not-due', dueAt: seeded.delayed.runAt });
      const running = (await http().get(`${API}/queues/default/tasks/${seeded.running.id}`).set(KEY).expect(200)).body;
      expect(running.actions).toEqual({ cancel: true, changePriority: false, retry: false });
    });

    it('pauses and resumes a provider, and changes limits, in the store', async () => {
      const paused = (await http().post(`${API}/queues/default/providers/vendorA/pause`).set(WRITE).expect(200)).body;
      expect(paused.providers.find((p: { providerKey: string }) => p.providerKey === 'vendorA').paused).toBe(true);
      expect((await d.store.getLimits()).providers.vendorA.paused).toBe(true);
      await http().post(`${API}/queues/default/providers/vendorA/resume`).set(WRITE).expect(200);
      expect((await d.store.getLimits()).providers.vendorA.paused).toBe(false);

      await http().patch(`${API}/queues/default/limits`).set(WRITE).send({ kind: 'provider', providerKey: 'vendorA', qps: 12.5, burst: 4 }).expect(200);
      await http().patch(`${API}/queues/default/limits`).set(WRITE).send({ kind: 'tenant', tenantId: 'tenant-9', quota: 4 }).expect(200);
      await http().patch(`${API}/queues/default/limits`).set(WRITE).send({ kind: 'account', providerKey: 'vendorA', accountId: 'acct-0', concurrency: 5 }).expect(200);
      const v = (await http().patch(`${API}/queues/default/limits`).set(WRITE).send({ kind: 'concurrencyKey', key: 'reindex:tenant-2', limit: null }).expect(200)).body;
      const limits = await d.store.getLimits();
      expect(limits.providers.vendorA).toMatchObject({ qps: 12.5, burst: 4 });
      expect(limits.tenants['tenant-9']).toBe(4);
      expect(limits.concurrencyKeys).toEqual({});
      expect(v.accounts.rows).toEqual(expect.arrayContaining([expect.objectContaining({ accountId: 'acct-0', limit: 5, override: true, full: false })]));
    });

    it('changes the priority of a pending task and cancels tasks, in the store', async () => {
      const target = seeded.pendingInClaimOrder[3];
      const res = (await http().post(`${API}/queues/default/tasks/${target.id}/priority`).set(WRITE).send({ priority: -2147483648 }).expect(200)).body;
      expect(res.task.priority).toBe(-2147483648);
      expect((await d.store.get(target.id))!.priority).toBe(-2147483648);
      await http().post(`${API}/queues/default/tasks/${target.id}/cancel`).set(WRITE).expect(200);
      expect((await d.store.get(target.id))!.status).toBe(TaskStatus.CANCELED);
      const running = (await http().post(`${API}/queues/default/tasks/${seeded.running.id}/cancel`).set(WRITE).expect(200)).body;
      expect(running.task).toMatchObject({ status: 'RUNNING', cancelRequested: true });
      expect(running.actions.cancel).toBe(false);
    });

    it('retries a failed task: it is pending again, its history keeps the failure', async () => {
      const res = (await http().post(`${API}/queues/default/tasks/${seeded.failed.id}/retry`).set(WRITE).expect(200)).body;
      expect(res.task).toMatchObject({ status: 'PENDING_SUBMIT', attempts: 0, error: null });
      if (history) {
        expect(res.timeline.entries.map((e: { to: string }) => e.to)).toEqual(['PENDING_SUBMIT', 'SUBMITTING', 'FAILED', 'PENDING_SUBMIT']);
        expect(res.timeline.entries[2].error).toBe('vendor answered 500 five times');
        expect(res.timeline.entries[3].label).toBe('retried from the dashboard or the API');
      } else {
        expect(res.timeline.source).toBe('off');
        expect(res.timeline.entries[0]).toMatchObject({ label: 'created', to: 'PENDING_SUBMIT' });
      }
      expect((await d.store.get(seeded.failed.id))!.status).toBe(TaskStatus.PENDING_SUBMIT);
    });

    it('says which limits hold back the head of the queue', async () => {
      await d.admission.pause('mailer');
      const w = (await http().get(`${API}/queues/default/waiting`).set(KEY).expect(200)).body;
      expect(w.sampled).toBe(9);
      const explained = await Promise.all([...seeded.pendingInClaimOrder, seeded.delayed].map((t) => d.tasks.explain(t.id)));
      const count = (v: string) => explained.filter((e) => e.verdict === v).length;
      expect(w.verdicts).toEqual({ 'not-pending': 0, 'not-due': 1, refused: count('refused'), waiting: count('waiting'), next: count('next') });
      const mailer = seeded.pendingInClaimOrder.filter((t) => t.providerKey === 'mailer').length;
      expect(w.byLimit).toContainEqual({ limit: 'paused', key: 'mailer', tasks: mailer });
      // vendorA's accounts are full (2 of 2 each): its pending tasks wait on their account
      expect(w.byLimit).toContainEqual(expect.objectContaining({ limit: 'account', key: 'vendorA / acct-0', inUse: 2, max: 2 }));
      expect(w.byLimit.reduce((n: number, r: { tasks: number }) => n + r.tasks, 0)).toBe(count('refused'));
    });

    it('refuses a change without the dashboard header (a cross-site form cannot send it)', async () => {
      const res = await http().post(`${API}/queues/default/providers/vendorA/pause`).set(KEY).expect(403);
      expect(res.body.message).toBe(Messages.dashboardNeedsHeader(DASHBOARD_WRITE_HEADER));
      expect((await d.store.getLimits()).providers.vendorA.paused).toBe(false);
    });

    it('answers bad input with a 400 that says what is wrong, and changes nothing', async () => {
      const unknownQueue = await http().get(`${API}/queues/nope/tasks`).set(KEY).expect(400);
      expect(unknownQueue.body).toMatchObject({ error: 'QueueNotFoundError', message: Messages.queueNotFound('nope', ['default']) });
      await http().post(`${API}/queues/nope/providers/vendorA/pause`).set(WRITE).expect(400);
      const id = seeded.pendingInClaimOrder[0].id;
      for (const priority of [1.5, '7', 2147483648, null, -2147483649]) {
        const res = await http().post(`${API}/queues/default/tasks/${id}/priority`).set(WRITE).send({ priority }).expect(400);
        expect(res.body.message).toBe(Messages.invalidPriority(priority));
      }
      expect((await d.store.get(id))!.priority).toBe(seeded.pendingInClaimOrder[0].priority);
      const extra = await http().post(`${API}/queues/default/tasks/${id}/priority`).set(WRITE).send({ priority: 3, tenantId: 'x' }).expect(400);
      expect(extra.body.message).toContain('Invalid field "tenantId"');
      const status = await http().get(`${API}/queues/default/tasks?status=DONE`).set(KEY).expect(400);
      expect(status.body.message).toContain('status must be one of PENDING_SUBMIT');
      await http().get(`${API}/queues/default/tasks?limit=0`).set(KEY).expect(400);
      await http().get(`${API}/queues/default/tasks?limit=201`).set(KEY).expect(400);
      await http().get(`${API}/queues/default/tasks?minPriority=1e3`).set(KEY).expect(400);
      await http().get(`${API}/queues/default/tasks?minPriority=5&maxPriority=1`).set(KEY).expect(400);
      await http().get(`${API}/queues/default/tasks?status=FAILED&status=CANCELED`).set(KEY).expect(400);
      await http().get(`${API}/queues/default/tasks?sort=priority`).set(KEY).expect(400);
      const cursor = await http().get(`${API}/queues/default/tasks?cursor=abc`).set(KEY).expect(400);
      expect(cursor.body.message).toBe(Messages.badCursor());
      await http().get(`${API}/queues/default/tasks?type=%01`).set(KEY).expect(400);
      await http().post(`${API}/queues/default/tasks/${id}/retry`).set(WRITE).expect(409); // a pending task is not retried
      const qps = await http().patch(`${API}/queues/default/limits`).set(WRITE).send({ kind: 'provider', providerKey: 'vendorA', qps: -1 }).expect(400);
      expect(qps.body.message).toBe(Messages.invalidLimit('qps', -1, 'a number > 0 (submits per second), or null for no rate limit'));
      await http().patch(`${API}/queues/default/limits`).set(WRITE).send({ kind: 'provider', providerKey: 'vendorA', qpss: 3 }).expect(400);
      await http().patch(`${API}/queues/default/limits`).set(WRITE).send({ kind: 'everything', quota: 3 }).expect(400);
      await http().patch(`${API}/queues/default/limits`).set(WRITE).send({ kind: 'tenant', tenantId: 'tenant-1' }).expect(400);
      await http().patch(`${API}/queues/default/limits`).set(WRITE).send([1, 2]).expect(400);
      expect((await d.store.getLimits()).providers.vendorA).toMatchObject({ qps: 5, burst: 2, paused: false });
    });

    it('answers 404 for an unknown task and 409 for an action its status does not allow', async () => {
      const missing = await http().get(`${API}/queues/default/tasks/no-such-task`).set(KEY).expect(404);
      expect(missing.body.message).toBe(Messages.taskNotFound('no-such-task'));
      await http().post(`${API}/queues/default/tasks/no-such-task/cancel`).set(WRITE).expect(404);
      const conflict = await http().post(`${API}/queues/default/tasks/${seeded.failed.id}/priority`).set(WRITE).send({ priority: 3 }).expect(409);
      expect(conflict.body.message).toContain(seeded.failed.id);
    });

    it('streams live updates, and the app still shuts down with a page open', async () => {
      const chunks: string[] = [];
      const ended = new Promise<void>((resolve, reject) => {
        const req = httpRequest(`${d.url}${API}/events`, { headers: KEY }, (res) => {
          expect(res.statusCode).toBe(200);
          expect(res.headers['content-type']).toMatch(/^text\/event-stream/);
          res.setEncoding('utf8');
          res.on('data', (c: string) => chunks.push(c));
          res.on('end', resolve);
          res.on('error', reject);
        });
        req.on('error', reject);
        req.end();
      });
      while (!chunks.join('').includes('event: tick')) await new Promise((r) => setTimeout(r, 20));
      const data = /data: (.*)/.exec(chunks.join(''))![1];
      expect(JSON.parse(data).queues).toEqual([{ name: 'default', byStatus: (await d.tasks.stats()).byStatus }]);
      await d.close();
      await ended;
    });
  });

  describe(`dashboard JSON API at scale (${storeName} store)`, () => {
    let d: DashboardApp;
    const TENANTS = 700;
    const ACCOUNTS = 300;
    const PENDING = 1000;

    beforeAll(async () => {
      d = await startDashboardApp(await newStore(), { guard: TestAdminGuard });
      // 700 tenants and 300 accounts with tasks in flight (one per tenant), 1000 pending behind them
      await d.admission.setTenantQuota(null, 1);
      for (let i = 0; i < 100; i++) await d.admission.setTenantQuota(`t-${i * 7}`, 5);
      await d.tasks.submitMany(
        Array.from({ length: TENANTS }, (_, i) => ({ type: 'reindex', payload: { i }, tenantId: `t-${i}`, accountId: `a-${i % ACCOUNTS}`, priority: 10 })),
      );
      const claim = await d.store.claimSubmissions({ owner: 'worker-big', limit: TENANTS, leaseMs: 3_600_000 });
      expect(claim.claimed).toHaveLength(TENANTS);
      await d.tasks.submitMany(Array.from({ length: PENDING }, (_, i) => ({ type: 'email', payload: { i }, priority: (i * 37) % 11, tenantId: `p-${i % 50}` })));
    }, 120_000);
    afterAll(async () => {
      await d?.close();
    });

    it('shows the busiest of hundreds of tenants and accounts against their limits, and counts the rest', async () => {
      const v = (await request(d.app.getHttpServer()).get(`${API}/queues/default/limits`).set(KEY).expect(200)).body;
      const stats = await d.tasks.stats();
      const limits = await d.admission.getLimits();
      const tenantKeys = new Set([...Object.keys(stats.inFlightByTenant), ...Object.keys(limits.tenants)]);
      expect(tenantKeys.size).toBe(TENANTS);
      expect(v.tenants.rows).toHaveLength(500);
      expect(v.tenants.more).toBe(TENANTS - 500);
      const fullTenants = [...tenantKeys].filter((t) => (stats.inFlightByTenant[t] ?? 0) >= (limits.tenants[t] ?? 1)).length;
      expect(fullTenants).toBe(600);
      // the full ones first, each row what the store says
      v.tenants.rows.forEach((r: { key: string; inFlight: number; limit: number; full: boolean; override: boolean }, i: number) => {
        expect(r.full).toBe(i < Math.min(500, fullTenants));
        expect(r.inFlight).toBe(stats.inFlightByTenant[r.key] ?? 0);
        expect(r.limit).toBe(limits.tenants[r.key] ?? 1);
        expect(r.override).toBe(limits.tenants[r.key] !== undefined);
      });
      expect(v.accounts.rows).toHaveLength(ACCOUNTS);
      expect(v.accounts.more).toBe(0);
      const perAccount = Object.fromEntries(stats.inFlightByAccount.map((a) => [a.accountId, a.count]));
      for (const r of v.accounts.rows) expect(r.inFlight).toBe(perAccount[r.accountId]);
      expect(v.accounts.rows.reduce((s: number, r: { inFlight: number }) => s + r.inFlight, 0)).toBe(TENANTS);
      const overview = (await request(d.app.getHttpServer()).get(`${API}/queues/default`).set(KEY).expect(200)).body;
      expect(overview.workers).toEqual([{ owner: 'worker-big', leases: 500, lastSeenAt: null }]);
      expect(overview.leaseScanCapped).toBe(true); // the page says the first 500 were counted
    });

    it('pages through a thousand pending tasks in claim order, each exactly once', async () => {
      const seen = new Set<string>();
      let prev: OrderFields | null = null;
      let cursor: string | null = null;
      let pages = 0;
      do {
        const res: request.Response = await request(d.app.getHttpServer())
          .get(`${API}/queues/default/tasks`)
          .query({ status: 'PENDING_SUBMIT', limit: 200, ...(cursor ? { cursor } : {}) })
          .set(KEY)
          .expect(200);
        for (const t of res.body.tasks) {
          expect(seen.has(t.id)).toBe(false);
          if (prev) expect(compareOrder(prev, t)).toBeLessThan(0); // claim order across pages
          prev = t;
          seen.add(t.id);
        }
        cursor = res.body.nextCursor;
        pages++;
      } while (cursor);
      expect(seen.size).toBe(PENDING);
      expect(pages).toBe(5);
    });
  });

  describe(`dashboard JSON API, read-only (${storeName} store)`, () => {
    let guarded: DashboardApp;
    let open: DashboardApp;
    let seeded: SeededTasks;

    beforeAll(async () => {
      const store = await newStore();
      guarded = await startDashboardApp(store, { guard: TestAdminGuard, readOnly: true });
      seeded = await seedTasks(guarded.tasks, store, guarded.admission);
      open = await startDashboardApp(store, { readOnly: true, unsafeNoAuth: true, path: 'ops/queues' });
    });
    afterAll(async () => {
      await guarded?.close();
      await open?.close();
    });

    it('reads everything and changes nothing, whatever the route', async () => {
      const http = request(guarded.app.getHttpServer());
      expect((await http.get(`${API}/meta`).set(KEY).expect(200)).body.readOnly).toBe(true);
      const task = (await http.get(`${API}/queues/default/tasks/${seeded.pendingInClaimOrder[0].id}`).set(KEY).expect(200)).body;
      expect(task.actions).toEqual({ cancel: false, changePriority: false, retry: false });
      const failed = (await http.get(`${API}/queues/default/tasks/${seeded.failed.id}`).set(KEY).expect(200)).body;
      expect(failed.actions.retry).toBe(false);
      const id = seeded.pendingInClaimOrder[0].id;
      const writes = [
        http.post(`${API}/queues/default/providers/vendorA/pause`),
        http.post(`${API}/queues/default/providers/vendorA/resume`),
        http.patch(`${API}/queues/default/limits`).send({ kind: 'defaultTenant', quota: 1 }),
        http.post(`${API}/queues/default/tasks/${id}/cancel`),
        http.post(`${API}/queues/default/tasks/${id}/priority`).send({ priority: 1 }),
        http.post(`${API}/queues/default/tasks/${seeded.failed.id}/retry`),
      ];
      for (const w of writes) {
        const res = await w.set(WRITE).expect(403);
        expect(res.body).toMatchObject({ error: 'ReadOnlyError', message: Messages.dashboardReadOnly() });
      }
      expect((await guarded.store.get(id))!).toMatchObject({ status: 'PENDING_SUBMIT', priority: seeded.pendingInClaimOrder[0].priority });
      expect((await guarded.store.getLimits()).defaultTenantQuota).toBe(10);
      expect((await guarded.store.get(seeded.failed.id))!.status).toBe(TaskStatus.FAILED);
      await http.get(`${API}/meta`).expect(401); // read-only does not mean open
    });

    it('without a guard only when read-only and unsafeNoAuth: readable by anyone, still refuses changes', async () => {
      const http = request(open.app.getHttpServer());
      await http.get('/ops/queues').expect(200);
      const { queues } = (await http.get('/ops/queues/api/queues').expect(200)).body;
      expect(queues[0].byStatus.PENDING_SUBMIT).toBe(9);
      await http.post('/ops/queues/api/queues/default/providers/vendorA/pause').set({ [DASHBOARD_WRITE_HEADER]: '1' }).expect(403);
      expect((await open.store.getLimits()).providers.vendorA.paused).toBe(false);
    });

    it('refuses to start without a guard unless read-only and unsafeNoAuth', () => {
      for (const options of [{}, { readOnly: true }, { unsafeNoAuth: true }, { readOnly: false, unsafeNoAuth: true }]) {
        expect(() => PriorityQueueDashboardModule.forRoot(options)).toThrow(Messages.dashboardNoAuth());
      }
      expect(() => PriorityQueueDashboardModule.forRoot({ guard: TestAdminGuard, path: '../x' })).toThrow(Messages.dashboardBadPath('../x'));
      expect(() => PriorityQueueDashboardModule.forRoot({ guard: TestAdminGuard, refreshMs: 10 })).toThrow('refreshMs');
      expect(() => PriorityQueueDashboardModule.forRoot({ guard: {} as never })).toThrow('guard');
    });
  });
}
