import { Body, Get, Header, HttpCode, HttpStatus, Inject, Param, Patch, Post, Query, Req, Sse, type MessageEvent } from '@nestjs/common';
import type { Observable } from 'rxjs';
import { TaskNotFoundError } from '../core/errors';
import { asset, page, PAGE_HEADERS } from './assets';
import { DashboardViews } from './dashboard-views';
import { DASHBOARD_OPTIONS, type ResolvedDashboardOptions } from './dashboard.options';
import { LiveUpdates, type StreamSocket } from './live-updates';
import { QueueSource } from './queue-source';
import { parseLimitBody, parsePriorityBody, parseTaskId, parseTaskQuery } from './request-parsing';

/**
 * The routes of the dashboard, relative to its path. The module subclasses these per forRoot()
 * to put them at the chosen path behind the chosen guard (see dashboard.module.ts).
 *   GET  /                    the page          GET /app.js, /app.css   its files
 *   GET  api/...              what the page reads (JSON), api/events the live updates (SSE)
 *   POST/PATCH api/...        changes: DashboardWriteController, refused when read-only
 */
export class DashboardReadController {
  constructor(
    @Inject(DashboardViews) private readonly views: DashboardViews,
    @Inject(QueueSource) private readonly source: QueueSource,
    @Inject(LiveUpdates) private readonly live: LiveUpdates,
    @Inject(DASHBOARD_OPTIONS) private readonly options: ResolvedDashboardOptions,
  ) {}

  @Get()
  @Header('content-type', 'text/html; charset=utf-8')
  @Header('content-security-policy', PAGE_HEADERS['content-security-policy'])
  @Header('x-content-type-options', PAGE_HEADERS['x-content-type-options'])
  @Header('referrer-policy', PAGE_HEADERS['referrer-policy'])
  @Header('cache-control', PAGE_HEADERS['cache-control'])
  page(@Req() req: { url?: string }): string {
    const path = (req.url ?? '/').split('?')[0];
    const last = path.split('/').filter(Boolean).pop() ?? '';
    return page(path.endsWith('/') || !last ? './' : `${last}/`, this.options.title);
  }

  @Get('app.js')
  @Header('content-type', 'text/javascript; charset=utf-8')
  @Header('x-content-type-options', 'nosniff')
  @Header('cache-control', 'public, max-age=31536000, immutable')
  script(): string {
    return asset('app.js')!.body;
  }

  @Get('app.css')
  @Header('content-type', 'text/css; charset=utf-8')
  @Header('x-content-type-options', 'nosniff')
  @Header('cache-control', 'public, max-age=31536000, immutable')
  style(): string {
    return asset('app.css')!.body;
  }

  @Get('api/meta')
  @Header('cache-control', 'no-store')
  meta() {
    return this.views.meta();
  }

  @Get('api/queues')
  @Header('cache-control', 'no-store')
  async queues() {
    return { queues: await Promise.all(this.source.all().map((q) => this.views.overview(q))) };
  }

  @Get('api/queues/:queue')
  @Header('cache-control', 'no-store')
  queue(@Param('queue') queue: string) {
    return this.views.overview(this.source.queue(queue));
  }

  @Get('api/queues/:queue/limits')
  @Header('cache-control', 'no-store')
  limits(@Param('queue') queue: string) {
    return this.views.limits(this.source.queue(queue));
  }

  @Get('api/queues/:queue/tasks')
  @Header('cache-control', 'no-store')
  tasks(@Param('queue') queue: string, @Query() query: Record<string, unknown>) {
    const q = this.source.queue(queue);
    return this.views.tasks(q, parseTaskQuery(query));
  }

  @Get('api/queues/:queue/tasks/:id')
  @Header('cache-control', 'no-store')
  async task(@Param('queue') queue: string, @Param('id') id: string) {
    const q = this.source.queue(queue);
    const taskId = parseTaskId(id);
    const task = await q.get(taskId);
    if (!task) throw new TaskNotFoundError(taskId);
    return this.views.task(q, task);
  }

  @Get('api/queues/:queue/waiting')
  @Header('cache-control', 'no-store')
  waiting(@Param('queue') queue: string) {
    return this.views.waiting(this.source.queue(queue));
  }

  @Sse('api/events')
  events(@Req() req: { socket?: StreamSocket; raw?: { socket?: StreamSocket } }): Observable<MessageEvent> {
    return this.live.stream(req.socket ?? req.raw?.socket);
  }
}

export class DashboardWriteController {
  constructor(
    @Inject(DashboardViews) private readonly views: DashboardViews,
    @Inject(QueueSource) private readonly source: QueueSource,
  ) {}

  @Post('api/queues/:queue/providers/:provider/pause')
  @HttpCode(HttpStatus.OK)
  async pause(@Param('queue') queue: string, @Param('provider') provider: string) {
    const q = this.source.queue(queue);
    await q.setLimits({ kind: 'provider', providerKey: provider, paused: true });
    return this.views.limits(q);
  }

  @Post('api/queues/:queue/providers/:provider/resume')
  @HttpCode(HttpStatus.OK)
  async resume(@Param('queue') queue: string, @Param('provider') provider: string) {
    const q = this.source.queue(queue);
    await q.setLimits({ kind: 'provider', providerKey: provider, paused: false });
    return this.views.limits(q);
  }

  @Patch('api/queues/:queue/limits')
  async setLimit(@Param('queue') queue: string, @Body() body: unknown) {
    const q = this.source.queue(queue);
    await q.setLimits(parseLimitBody(body));
    return this.views.limits(q);
  }

  @Post('api/queues/:queue/tasks/:id/cancel')
  @HttpCode(HttpStatus.OK)
  async cancel(@Param('queue') queue: string, @Param('id') id: string) {
    const q = this.source.queue(queue);
    return this.views.task(q, await q.cancel(parseTaskId(id)));
  }

  @Post('api/queues/:queue/tasks/:id/priority')
  @HttpCode(HttpStatus.OK)
  async changePriority(@Param('queue') queue: string, @Param('id') id: string, @Body() body: unknown) {
    const q = this.source.queue(queue);
    const priority = parsePriorityBody(body);
    return this.views.task(q, await q.changePriority(parseTaskId(id), priority));
  }

  @Post('api/queues/:queue/tasks/:id/retry')
  @HttpCode(HttpStatus.OK)
  async retry(@Param('queue') queue: string, @Param('id') id: string) {
    const q = this.source.queue(queue);
    return this.views.task(q, await q.retry(parseTaskId(id)));
  }
}
