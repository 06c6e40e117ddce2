import { Injectable, Module, UnauthorizedException, type CanActivate, type ExecutionContext, type INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { AdmissionGuard, PriorityQueueModule, TaskManager } from 'nestjs-priority-queue';
import { TaskStatus, fenceOf, type Task, type TaskStore } from '../../../libs/priority-queue/src/core';
import { PriorityQueueDashboardModule, type PriorityQueueDashboardOptions } from 'nestjs-priority-queue/dashboard';

/** The key the test guard wants in the x-admin-key header. */
export const ADMIN_KEY = 'test-admin-key';

/** An app's admin guard, as a real app has one: a header with a secret. */
@Injectable()
export class TestAdminGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    const req = context.switchToHttp().getRequest<{ headers: Record<string, string | undefined> }>();
    if (req.headers['x-admin-key'] !== ADMIN_KEY) throw new UnauthorizedException('the dashboard needs the admin key in x-admin-key');
    return true;
  }
}

export const TASK_TYPES = [
  { type: 'ocr', providerKey: 'vendorA' },
  { type: 'email', providerKey: 'mailer' },
  { type: 'reindex', providerKey: 'search' },
];

export interface DashboardApp {
  app: INestApplication;
  url: string;
  tasks: TaskManager;
  admission: AdmissionGuard;
  store: TaskStore;
  close(): Promise<void>;
}

/** A Nest app on `store` (workers off: the test moves tasks itself) with the dashboard mounted. */
export async function startDashboardApp(store: TaskStore, dashboard: PriorityQueueDashboardOptions): Promise<DashboardApp> {
  @Module({
    imports: [
      PriorityQueueModule.forRoot({ store, workers: { enabled: false }, taskTypes: TASK_TYPES }),
      PriorityQueueDashboardModule.forRoot(dashboard),
    ],
  })
  class AppModule {}
  const app = await NestFactory.create(AppModule, { logger: false });
  await app.listen(0, '127.0.0.1');
  const url = (await app.getUrl()).replace('[::1]', '127.0.0.1');
  return {
    app,
    url,
    tasks: app.get(TaskManager),
    admission: app.get(AdmissionGuard),
    store,
    close: () => app.close(),
  };
}

export interface SeededTasks {
  /** Pending and due, in the order the queue will claim them. */
  pendingInClaimOrder: Task[];
  /** Pending, not due for an hour. */
  delayed: Task;
  submitting: Task[];
  running: Task;
  submitted: Task;
  succeeded: Task;
  failed: Task;
  canceled: Task;
}

/**
 * Tasks in every state: six claimed by "worker-1" (two then accepted by the provider, one
 * succeeded, one failed), pending tasks at several priorities, providers and tenants, one
 * delayed, one canceled; limits on vendorA, two tenants and a concurrency key.
 */
export async function seedTasks(tasks: TaskManager, store: TaskStore, admission: AdmissionGuard): Promise<SeededTasks> {
  const claimed = [];
  for (let i = 0; i < 6; i++) {
    claimed.push(await tasks.submit({ type: 'ocr', payload: { doc: `claimed-${i}` }, priority: 1000, tenantId: `tenant-${i % 3}`, accountId: `acct-${i % 2}` }));
  }
  const claim = await store.claimSubmissions({ owner: 'worker-1', limit: 6, leaseMs: 3_600_000 });
  if (claim.claimed.length !== 6) throw new Error(`seed: claimed ${claim.claimed.length} of 6`);
  const byId = new Map(claim.claimed.map((t) => [t.id, t]));
  const [c0, c1, c2, c3, c4, c5] = claimed.map((t) => byId.get(t.id)!);
  const running = await store.markSubmitted(fenceOf(c0), { externalId: 'job-0', status: TaskStatus.RUNNING, pollDelayMs: 3_600_000 });
  const submitted = await store.markSubmitted(fenceOf(c1), { externalId: 'job-1', status: TaskStatus.SUBMITTED, pollDelayMs: 3_600_000 });
  const succeeded = await store.complete(fenceOf(c2), { status: TaskStatus.SUCCEEDED, result: { pages: 3 } });
  const failed = await store.complete(fenceOf(c3), { status: TaskStatus.FAILED, error: 'vendor answered 500 five times' });

  const specs: Array<{ type: string; priority: number; tenantId?: string; accountId?: string; concurrencyKey?: string }> = [
    { type: 'email', priority: 5, tenantId: 'tenant-1' },
    { type: 'ocr', priority: 100, tenantId: 'tenant-2', accountId: 'acct-1' },
    { type: 'reindex', priority: 0, tenantId: 'tenant-1', concurrencyKey: 'reindex:tenant-1' },
    { type: 'ocr', priority: 100, tenantId: 'tenant-0', accountId: 'acct-0' },
    { type: 'email', priority: -3 },
    { type: 'ocr', priority: 50, tenantId: 'tenant-1', accountId: 'acct-0' },
    { type: 'reindex', priority: 50, tenantId: 'tenant-2', concurrencyKey: 'reindex:tenant-2' },
    { type: 'email', priority: 5, tenantId: 'tenant-0' },
  ];
  const pending: Task[] = [];
  for (const [i, s] of specs.entries()) pending.push(await tasks.submit({ ...s, payload: { n: i }, idempotencyKey: `seed-${i}` }));
  const canceled = await tasks.cancel((await tasks.submit({ type: 'email', payload: { n: 'to-cancel' }, priority: 7 })).id);
  const delayed = await tasks.submit({ type: 'email', payload: { n: 'later' }, priority: 10_000, delayMs: 3_600_000 });

  await admission.setProviderRate('vendorA', 5, 2);
  await admission.setAccountConcurrency('vendorA', null, 2);
  await admission.setTenantQuota('tenant-1', 3);
  await admission.setTenantQuota(null, 10);
  await admission.setConcurrencyKeyLimit('reindex:tenant-2', 2);

  // claim order: priority desc, then runAt, createdAt, seq (all due at creation here)
  const pendingInClaimOrder = [...pending].sort((a, b) => b.priority - a.priority || a.runAt - b.runAt || a.createdAt - b.createdAt || a.seq - b.seq);
  return { pendingInClaimOrder, delayed, submitting: [c4, c5], running, submitted, succeeded, failed, canceled };
}
