/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
import type { Browser } from 'puppeteer-core';
import { MemoryTaskStore } from 'nestjs-priority-queue';
import { Messages, TaskStatus, type Task } from '../../libs/priority-queue/src/core';
import { launchChromium, type ChromiumHandle } from '../support/servers/chromium';
import { TestAdminGuard, seedTasks, startDashboardApp, type DashboardApp, type SeededTasks } from './support/dashboard-app';
import { accessibilityViolations, focused, openDashboardPage, show, tabTo } from './support/browser-page';

/**
 * The dashboard in a real browser: Debian's Chromium driven by puppeteer-core, on an app whose
 * tasks are in every state. Reads what a person sees and does what a person does (keyboard
 * included), and checks the store.
 */
describe('dashboard in Chromium', () => {
  let chromium: ChromiumHandle;
  let browser: Browser;
  let d: DashboardApp;
  let seeded: SeededTasks;
  let base: string;

  beforeAll(async () => {
    chromium = await launchChromium();
    browser = chromium.browser;
    d = await startDashboardApp(new MemoryTaskStore(), { guard: TestAdminGuard, refreshMs: 500 });
    seeded = await seedTasks(d.tasks, d.store, d.admission);
    base = `${d.url}/dashboard`;
  }, 60_000);

  afterAll(async () => {
    await chromium?.close();
    await d?.close();
  });

  it('shows the queues and updates them by itself, without a reload', async () => {
    const { page, problems } = await openDashboardPage(browser);
    await show(page, `${base}/`, 'Queues');
    const count = (status: string) =>
      page.evaluate((s) => [...document.querySelectorAll('.counts div')].find((e) => e.querySelector('dt')?.textContent === s)?.querySelector('dd')?.textContent, status);
    const before = (await d.tasks.stats()).byStatus.PENDING_SUBMIT;
    expect(await count('PENDING_SUBMIT')).toBe(String(before));
    expect(await count('RUNNING')).toBe('1');
    const navigations: string[] = [];
    page.on('framenavigated', (f) => navigations.push(f.url()));
    await d.tasks.submit({ type: 'email', payload: { n: 'live' }, priority: -50 });
    await page.waitForFunction((n) => [...document.querySelectorAll('.counts dd')][0]?.textContent === n, {}, String(before + 1));
    expect(navigations).toEqual([]);
    expect(await page.$eval('main', (m) => m.textContent)).toContain('worker-1');
    expect(await accessibilityViolations(page)).toEqual([]);
    await page.close();
    expect(problems.list).toEqual([]);
  });

  it('lists the pending tasks in the order the queue will claim them, page after page', async () => {
    const { page, problems } = await openDashboardPage(browser);
    // DESIGN §2 by hand: the due ones by priority desc, runAt, createdAt, seq; then the later ones by runAt
    const now = await d.store.now();
    const pending = await d.tasks.list(TaskStatus.PENDING_SUBMIT, 1000);
    const claimOrder = (a: Task, b: Task) => b.priority - a.priority || a.runAt - b.runAt || a.createdAt - b.createdAt || a.seq - b.seq;
    const due = pending.filter((t) => t.runAt <= now).sort(claimOrder);
    const later = pending.filter((t) => t.runAt > now).sort((a, b) => a.runAt - b.runAt || a.seq - b.seq);
    const expected = [...due, ...later].map((t) => t.id);
    expect(expected.length).toBeGreaterThan(8);
    expect(expected).not.toEqual(pending.map((t) => t.id)); // list() is by seq: that order would not pass
    // ...and it is the order of the queue's own query, which the page shows
    expect((await d.tasks.query({ status: TaskStatus.PENDING_SUBMIT, limit: 500 })).tasks.map((t) => t.id)).toEqual(expected);
    await show(page, `${base}/#/q/default/tasks?status=PENDING_SUBMIT&limit=25`, 'Tasks');
    const rows = () => page.$$eval('main tbody tr', (trs) => trs.map((r) => [r.querySelector('td')?.textContent, r.querySelector('a.id')?.getAttribute('title')]));
    expect(await rows()).toEqual(expected.map((id, i) => [String(i + 1), id]));
    expect(await accessibilityViolations(page)).toEqual([]);
    // five per page: the second page goes on where the first stopped, numbered on
    await page.goto(`${base}/#/q/default/tasks?status=PENDING_SUBMIT&limit=5`);
    await page.waitForFunction(() => document.querySelectorAll('main tbody tr').length === 5);
    // clicked inside the page: a live update may replace the pager between a lookup and a click
    await page.$eval('a[data-key="next"]', (a) => (a as HTMLAnchorElement).click());
    await page.waitForFunction(() => document.querySelector('main tbody tr td')?.textContent === '6');
    expect(await rows()).toEqual(expected.slice(5, 10).map((id, i) => [String(i + 6), id]));
    await page.close();
    expect(problems.list).toEqual([]);
  });

  it('pauses a provider from the page, with the keyboard only, after a confirmation', async () => {
    const { page, problems } = await openDashboardPage(browser);
    await show(page, `${base}/#/q/default/limits`, 'Limits and load');
    expect(await accessibilityViolations(page)).toEqual([]);
    await tabTo(page, 'button:Pause vendorA');
    await page.keyboard.press('Enter');
    await page.waitForSelector('dialog[open]');
    expect(await page.$eval('dialog h2', (e) => e.textContent)).toBe('Pause provider vendorA?');
    expect(await focused(page)).toBe('button:Cancel'); // a destructive change does not go through by a second Enter
    expect((await d.store.getLimits()).providers.vendorA.paused).toBe(false);
    await page.keyboard.down('Shift');
    await page.keyboard.press('Tab');
    await page.keyboard.up('Shift');
    expect(await focused(page)).toBe('button:Pause');
    await page.keyboard.press('Enter');
    await page.waitForFunction(() => document.getElementById('notice')?.textContent === 'vendorA paused.');
    expect((await d.store.getLimits()).providers.vendorA.paused).toBe(true);
    await page.waitForFunction(() => [...document.querySelectorAll('main tr')].some((r) => r.textContent?.startsWith('vendorApaused')));
    expect(await focused(page)).toBe('button:Resume vendorA'); // focus comes back to the row's button
    await page.close();
    expect(problems.list).toEqual([]);
  });

  it("shows a task's fields and transitions, and changes its priority by keyboard", async () => {
    const { page, problems } = await openDashboardPage(browser);
    await show(page, `${base}/#/q/default/tasks/${seeded.failed.id}`, 'Task');
    const transitions = () => page.$$eval('main section:nth-of-type(2) table tbody tr', (rows) => rows.map((r) => [...r.querySelectorAll('td')].slice(1).map((c) => c.textContent)));
    expect(await transitions()).toEqual([
      ['PENDING_SUBMIT', 'created', ''],
      ['PENDING_SUBMIT → SUBMITTING', 'claimed by a worker', ''],
      ['SUBMITTING → FAILED', '', 'vendor answered 500 five times'],
    ]);
    expect(await page.$('button[data-key="cancel"]')).toBeNull();
    await tabTo(page, 'button:Retry task');
    await page.keyboard.press('Enter');
    await page.waitForSelector('dialog[open]');
    await page.keyboard.press('Enter');
    await page.waitForFunction(() => document.getElementById('notice')?.textContent === 'Task queued again.');
    expect((await d.store.get(seeded.failed.id))!.status).toBe(TaskStatus.PENDING_SUBMIT);
    await page.waitForFunction(() => document.querySelectorAll('main section:nth-of-type(2) table tbody tr').length === 4);
    expect((await transitions())[3]).toEqual(['FAILED → PENDING_SUBMIT', 'retried from the dashboard or the API', '']);

    const target = seeded.pendingInClaimOrder[1];
    await show(page, `${base}/#/q/default/tasks/${target.id}`, 'Task');
    expect(await accessibilityViolations(page)).toEqual([]);
    // why it is not running: the queue's own explanation
    const { message } = await d.tasks.explain(target.id);
    expect(await page.$eval('.explain p', (p) => p.textContent)).toBe(message);
    await tabTo(page, 'input:New priority');
    await page.keyboard.down('Control');
    await page.keyboard.press('a');
    await page.keyboard.up('Control');
    await page.keyboard.type('4242');
    await page.keyboard.press('Tab');
    expect(await focused(page)).toBe('button:Change priority');
    await page.keyboard.press('Enter');
    await page.waitForSelector('dialog[open]');
    expect(await focused(page)).toBe('button:Change priority'); // the dialog's confirm button
    await page.keyboard.press('Enter');
    await page.waitForFunction(() => document.getElementById('notice')?.textContent === 'Priority changed.');
    expect((await d.store.get(target.id))!.priority).toBe(4242);

    await tabTo(page, 'button:Cancel task');
    await page.keyboard.press('Enter');
    await page.waitForSelector('dialog[open]');
    await page.click('dialog button[value="ok"]');
    await page.waitForFunction(() => document.getElementById('notice')?.textContent === 'Task canceled.');
    expect((await d.store.get(target.id))!.status).toBe(TaskStatus.CANCELED);
    await page.close();
    expect(problems.list).toEqual([]);
  });

  it('says "history off" on a task page when the store keeps no transitions', async () => {
    const off = await startDashboardApp(new MemoryTaskStore({ historyLimit: 0 }), { guard: TestAdminGuard });
    try {
      const task = await off.tasks.submit({ type: 'email', payload: { n: 'no history' } });
      const { page, problems } = await openDashboardPage(browser);
      await show(page, `${off.url}/dashboard/#/q/default/tasks/${task.id}`, 'Task');
      expect(await page.$eval('.history-off', (e) => e.textContent)).toMatch(/^History off: /);
      expect(await page.$eval('main section:nth-of-type(2) table caption', (e) => e.textContent)).toBe('The times the task records');
      expect(await page.$$eval('main section:nth-of-type(2) table tbody tr', (rows) => rows.map((r) => r.querySelectorAll('td')[2].textContent))).toEqual(['created']);
      expect(await accessibilityViolations(page)).toEqual([]);
      await page.close();
      expect(problems.list).toEqual([]);
    } finally {
      await off.close();
    }
  });

  it('read-only: the same pages, with no action anywhere', async () => {
    const ro = await startDashboardApp(d.store, { guard: TestAdminGuard, readOnly: true });
    try {
      const { page, problems } = await openDashboardPage(browser);
      await show(page, `${ro.url}/dashboard/#/q/default/limits`, 'Limits and load');
      expect(await page.$eval('main', (m) => m.textContent)).toContain('Read-only dashboard');
      expect(await page.$$('main button')).toHaveLength(0);
      await show(page, `${ro.url}/dashboard/#/q/default/tasks/${seeded.submitting[0].id}`, 'Task');
      expect(await page.$$('main button, main input')).toHaveLength(0);
      await page.close();
      expect(problems.list).toEqual([]);
    } finally {
      await ro.close();
    }
  });

  it('shows a 400 of the API as a message the reader can act on', async () => {
    const { page, problems } = await openDashboardPage(browser);
    const target = seeded.pendingInClaimOrder[2];
    await show(page, `${base}/#/q/default/tasks/${target.id}`, 'Task');
    await page.$eval('#new-priority', (e) => ((e as HTMLInputElement).value = ''));
    await page.type('#new-priority', '99999999999');
    await page.$eval('button[data-key="priority"]', (b) => (b as HTMLButtonElement).click());
    await page.waitForSelector('dialog[open]');
    await page.click('dialog button[value="ok"]');
    await page.waitForFunction((m) => document.getElementById('alert')?.textContent === m, {}, Messages.invalidPriority(99999999999));
    expect((await d.store.get(target.id))!.priority).toBe(target.priority);
    await page.close();
    expect(problems.list).toEqual([
      `HTTP 400 for ${base}/api/queues/default/tasks/${target.id}/priority`,
      'console.error: Failed to load resource: the server responded with a status of 400 (Bad Request)',
    ]);
  });
});
