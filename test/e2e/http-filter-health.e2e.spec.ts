import { Body, Controller, Get, Param, Post, type INestApplication } from '@nestjs/common';
import { APP_FILTER } from '@nestjs/core';
import { HealthCheck, HealthCheckService, TerminusModule } from '@nestjs/terminus';
import request from 'supertest';
import {
  InjectTaskManager,
  memoryStore,
  IdempotencyConflictError,
  PriorityQueueExceptionFilter,
  PriorityQueueRegistry,
  TaskManager,
  TaskNotFoundError,
  TaskStatus,
} from 'nestjs-priority-queue';
import { PriorityQueueHealthIndicator, PriorityQueueHealthModule } from 'nestjs-priority-queue/health';
import { compileQueuesApp, eventually, Producer } from './support/queues-app';

@Controller()
class TasksController {
  constructor(
    private readonly tasks: TaskManager,
    @InjectTaskManager('reports') private readonly reports: TaskManager,
  ) {}

  @Post('tasks')
  submit(@Body() body: { type: string; priority?: unknown }) {
    return this.tasks.submit(body as never);
  }

  @Get('tasks/:id')
  async get(@Param('id') id: string) {
    const t = await this.tasks.get(id);
    if (!t) throw new TaskNotFoundError(id);
    return t;
  }

  @Post('tasks/:id/priority')
  priority(@Param('id') id: string, @Body() body: { priority: number }) {
    return this.tasks.changePriority(id, body.priority);
  }

  @Post('reports')
  submitReport(@Body() body: { type: string }) {
    return this.reports.submit(body as never);
  }

  @Post('keyed')
  keyed(@Body() body: { payload: unknown }) {
    return this.tasks.submit({ type: 'thumbnail', idempotencyKey: 'k-1', payload: body.payload });
  }

  @Get('boom')
  boom() {
    throw new Error('not ours');
  }
}

@Controller()
class HealthController {
  constructor(
    private readonly health: HealthCheckService,
    private readonly queues: PriorityQueueHealthIndicator,
  ) {}

  @Get('health')
  @HealthCheck()
  check() {
    return this.health.check([() => this.queues.isHealthy('queues')]);
  }

  @Get('health/wait')
  @HealthCheck()
  checkWait() {
    return this.health.check([() => this.queues.isHealthy('queues', { queues: ['reports'], maxOldestWaitMs: { reports: 0 } })]);
  }
}

describe('PriorityQueueExceptionFilter and the health indicator (e2e, HTTP)', () => {
  let app: INestApplication;

  beforeAll(async () => {
    const ref = await compileQueuesApp({
      store: memoryStore(),
      imports: [TerminusModule.forRoot({ logger: false }), PriorityQueueHealthModule],
      controllers: [TasksController, HealthController],
      providers: [{ provide: APP_FILTER, useClass: PriorityQueueExceptionFilter }],
    });
    app = ref.createNestApplication({ logger: false });
    await app.init();
  });

  afterAll(async () => {
    await app?.close();
  });

  it('answers 400 for bad input, with the error code and details', async () => {
    const r = await request(app.getHttpServer()).post('/tasks').send({ type: 'thumbnail', priority: 1.5 }).expect(400);
    expect(r.body).toMatchObject({ statusCode: 400, error: 'Bad Request', code: 'VALIDATION' });
    expect(r.body.message).toMatch(/priority/);
    expect(r.body.details.length).toBeGreaterThan(0);
    const unknown = await request(app.getHttpServer()).post('/tasks').send({ type: 'nope' }).expect(400);
    expect(unknown.body.code).toBe('UNKNOWN_TASK_TYPE');
    const wrong = await request(app.getHttpServer()).post('/reports').send({ type: 'thumbnail' }).expect(400);
    expect(wrong.body).toMatchObject({ code: 'WRONG_QUEUE' });
  });

  it('answers 404 for an unknown task, 409 for an invalid state or an idempotency conflict, 500 for other errors', async () => {
    const missing = await request(app.getHttpServer()).get('/tasks/nope').expect(404);
    expect(missing.body).toMatchObject({ statusCode: 404, error: 'Not Found', code: 'TASK_NOT_FOUND' });
    const created = await request(app.getHttpServer()).post('/tasks').send({ type: 'thumbnail', payload: { name: 'h' } }).expect(201);
    const tasks = app.get(TaskManager);
    await tasks.waitFor(created.body.id, { timeoutMs: 15_000 });
    const late = await request(app.getHttpServer()).post(`/tasks/${created.body.id}/priority`).send({ priority: 5 }).expect(409);
    expect(late.body).toMatchObject({ statusCode: 409, error: 'Conflict', code: 'INVALID_STATE' });
    await request(app.getHttpServer()).post('/keyed').send({ payload: { name: 'a' } }).expect(201);
    const conflict = await request(app.getHttpServer()).post('/keyed').send({ payload: { name: 'b' } }).expect(409);
    expect(conflict.body).toMatchObject({ statusCode: 409, code: 'IDEMPOTENCY_CONFLICT' });
    expect(new IdempotencyConflictError('k', ['payload'], 'x').code).toBe('IDEMPOTENCY_CONFLICT');
    const other = await request(app.getHttpServer()).get('/boom').expect(500);
    expect(other.body.code).toBeUndefined();
  });

  it('reports every queue up through terminus, down when a wait passes its threshold or a store fails', async () => {
    const ok = await request(app.getHttpServer()).get('/health').expect(200);
    expect(ok.body.status).toBe('ok');
    expect(ok.body.info.queues.queues).toEqual({
      default: { store: 'up', workers: 'running' },
      reports: { store: 'up', workers: 'running' },
      mail: { store: 'up', workers: 'running' },
    });

    const p = app.get(Producer);
    await p.reportsGuard.pause('pdf-engine');
    const held = await p.reports.submit({ type: 'pdf', payload: { id: 'held' } });
    const down = await eventually(async () => {
      const r = await request(app.getHttpServer()).get('/health/wait');
      return r.status === 503 ? r : null;
    }, 'a 503 for the waiting task');
    expect(down.body.error.queues.status).toBe('down');
    expect(down.body.error.queues.queues.reports).toMatchObject({ store: 'up', workers: 'running', maxOldestWaitMs: 0 });
    expect(down.body.error.queues.queues.reports.oldestWaitMs).toBeGreaterThan(0);
    await p.reportsGuard.resume('pdf-engine');
    await p.reports.waitFor(held.id, { timeoutMs: 15_000 });
    await request(app.getHttpServer()).get('/health/wait').expect(200);

    // a worker that should run and does not, and a store that no longer answers
    const mail = app.get(PriorityQueueRegistry).handle('mail');
    const worker = mail.worker!;
    await worker.stop();
    await mail.store.close();
    const broken = await request(app.getHttpServer()).get('/health').expect(503);
    expect(broken.body.error.queues.queues.mail).toMatchObject({ store: 'down', workers: 'stopped' });
    expect(broken.body.error.queues.queues.mail.error).toMatch(/closed/);
    expect(broken.body.details.queues.queues.default).toEqual({ store: 'up', workers: 'running' });
    expect((await p.defaults.stats()).byStatus[TaskStatus.SUCCEEDED]).toBeGreaterThan(0);
  });
});
