/// <reference lib="dom" />
/**
 * npm run docs:dashboard — screenshots of every page of the dashboard into docs/dashboard/,
 * taken in Debian's Chromium (puppeteer-core) from an app whose workers drain a real backlog:
 * OCR on a rate-limited vendor with two jobs per account, e-mails, a paused search provider,
 * failures and cancels. Not part of `npm test` (it waits for the chart to fill).
 *
 * Env: SHOTS_WARMUP_S (default 40): how long the workers run before the first screenshot.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { ScheduleModule } from '@nestjs/schedule';
import {
  AdmissionGuard,
  PermanentError,
  PriorityQueueModule,
  PriorityTask,
  TaskManager,
  TaskStatus,
  type HandlerContext,
  type PollContext,
  type PollResult,
} from 'nestjs-priority-queue';
import { PriorityQueueDashboardModule } from 'nestjs-priority-queue/dashboard';
import { ADMIN_KEY, TestAdminGuard } from '../test/dashboard/support/dashboard-app';
import { launchChromium } from '../test/support/servers/chromium';

const OUT = join(__dirname, '..', 'docs', 'dashboard');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

@PriorityTask('ocr', { providerKey: 'vendorA', pollIntervalMs: 400, backoff: { baseMs: 200, maxMs: 1000 } })
class OcrHandler {
  private polls = new Map<string, number>();
  async submit({ payload }: HandlerContext<{ doc: string }>) {
    await sleep(30);
    return `job-${payload.doc}`;
  }
  async poll({ externalId }: PollContext): Promise<PollResult> {
    const n = (this.polls.get(externalId) ?? 0) + 1;
    this.polls.set(externalId, n);
    if (n < 3) return { done: false, nextPollMs: 400 };
    return externalId.endsWith('7') ? { done: true, failed: 'vendor A could not read page 2' } : { done: true, result: { pages: 2 } };
  }
}

@PriorityTask('email', { providerKey: 'mailer', maxAttempts: 2, backoff: { baseMs: 100, maxMs: 200 } })
class EmailHandler {
  async run({ payload }: HandlerContext<{ to: string }>) {
    await sleep(80);
    if (payload.to.startsWith('bounce')) throw new PermanentError(`mailbox ${payload.to} does not exist`);
    return { sent: true };
  }
}

@PriorityTask('reindex', { providerKey: 'search' })
class ReindexHandler {
  async run() {
    await sleep(50);
    return { ok: true };
  }
}

@Module({
  imports: [
    ScheduleModule.forRoot(),
    PriorityQueueModule.forRoot({ workers: { concurrency: 6, idlePollMs: 100 } }),
    PriorityQueueDashboardModule.forRoot({ guard: TestAdminGuard, title: 'Document pipeline queues' }),
  ],
  providers: [OcrHandler, EmailHandler, ReindexHandler],
})
class ShotsModule {}

async function main(): Promise<void> {
  const app = await NestFactory.create(ShotsModule, { logger: false });
  await app.listen(0, '127.0.0.1');
  const url = (await app.getUrl()).replace('[::1]', '127.0.0.1');
  const tasks = app.get(TaskManager);
  const admission = app.get(AdmissionGuard);
  await admission.setProviderRate('vendorA', 3, 2);
  await admission.setAccountConcurrency('vendorA', null, 2);
  await admission.setTenantQuota(null, 4);
  await admission.setTenantQuota('acme', 8);
  await admission.pause('search');

  const tenants = ['acme', 'globex', 'initech', 'umbrella'];
  const backlog = [];
  for (let i = 0; i < 160; i++) {
    const tenantId = tenants[i % 4];
    backlog.push({ type: 'ocr', payload: { doc: `invoice-${i}` }, tenantId, accountId: `${tenantId}-acct`, priority: tenantId === 'acme' ? 100 : i % 3 === 0 ? -100 : 0 });
  }
  for (let i = 0; i < 60; i++) backlog.push({ type: 'email', payload: { to: i % 13 === 5 ? `bounce-${i}@example.test` : `user-${i}@example.test` }, tenantId: tenants[i % 4], priority: 10 });
  for (let i = 0; i < 12; i++) backlog.push({ type: 'reindex', payload: { index: `docs-${i}` }, tenantId: tenants[i % 4], concurrencyKey: `reindex:${tenants[i % 4]}`, priority: -500 });
  const submitted = await tasks.submitMany(backlog);
  await tasks.cancel(submitted[150].id);
  const warmup = Number(process.env.SHOTS_WARMUP_S ?? 40) * 1000;
  // keep a trickle of new work so the chart shows both lines moving
  const trickle = setInterval(() => void tasks.submit({ type: 'email', payload: { to: 'late@example.test' }, tenantId: 'globex', priority: 5 }), 400);
  console.log(`workers draining for ${warmup / 1000} s at ${url}/dashboard ...`);
  await sleep(warmup);

  const chromium = await launchChromium();
  try {
    const page = await chromium.browser.newPage();
    await page.setExtraHTTPHeaders({ 'x-admin-key': ADMIN_KEY });
    await page.setViewport({ width: 1280, height: 900, deviceScaleFactor: 1 });
    mkdirSync(OUT, { recursive: true });
    const shoot = async (name: string, hash: string, heading: string) => {
      await page.goto(`${url}/dashboard/${hash}`);
      await page.waitForFunction((h) => document.querySelector('main h1')?.textContent?.includes(h), {}, heading);
      await sleep(300);
      await page.screenshot({ path: join(OUT, `${name}.png`), fullPage: true });
      console.log(`docs/dashboard/${name}.png`);
    };
    await shoot('queues', '#/', 'Queues');
    await shoot('limits', '#/q/default/limits', 'Limits and load');
    await shoot('tasks', '#/q/default/tasks?status=PENDING_SUBMIT&limit=25', 'Tasks');
    const failed = (await tasks.list(TaskStatus.FAILED, 1))[0];
    if (failed) await shoot('task-failed', `#/q/default/tasks/${encodeURIComponent(failed.id)}`, 'Task');
    const waiting = (await tasks.list(TaskStatus.PENDING_SUBMIT, 1))[0];
    if (waiting) await shoot('task-pending', `#/q/default/tasks/${encodeURIComponent(waiting.id)}`, 'Task');
    // the confirmation before a change
    await page.goto(`${url}/dashboard/#/q/default/limits`);
    await page.waitForSelector('button[data-key="pause:vendorA"]');
    await page.$eval('button[data-key="pause:vendorA"]', (b) => (b as HTMLButtonElement).click());
    await page.waitForSelector('dialog[open]');
    await page.screenshot({ path: join(OUT, 'confirm-pause.png') });
    console.log('docs/dashboard/confirm-pause.png');
  } finally {
    clearInterval(trickle);
    await chromium.close();
    await app.close();
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
