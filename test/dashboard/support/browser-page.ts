/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
import axe from 'axe-core';
import type { Browser, Page } from 'puppeteer-core';
import { ADMIN_KEY } from './dashboard-app';

/** What the page logged as an error, failed to load, or threw: the test wants none. */
export interface PageProblems {
  list: string[];
}

/** A page of the dashboard with the admin key on every request (the app's guard wants it). */
export async function openDashboardPage(browser: Browser): Promise<{ page: Page; problems: PageProblems }> {
  const page = await browser.newPage();
  const problems: PageProblems = { list: [] };
  page.on('console', (m) => {
    if (m.type() === 'error' || m.type() === 'warn') problems.list.push(`console.${m.type()}: ${m.text()}`);
  });
  page.on('pageerror', (e) => problems.list.push(`page error: ${e instanceof Error ? e.message : String(e)}`));
  page.on('requestfailed', (r) => {
    // an EventSource (or a fetch) cut off by a navigation is not a failure of the page
    if (r.failure()?.errorText !== 'net::ERR_ABORTED') problems.list.push(`request failed: ${r.url()} ${r.failure()?.errorText}`);
  });
  page.on('response', (r) => {
    if (r.status() >= 400) problems.list.push(`HTTP ${r.status()} for ${r.url()}`);
  });
  await page.setExtraHTTPHeaders({ 'x-admin-key': ADMIN_KEY });
  await page.setViewport({ width: 1280, height: 900 });
  return { page, problems };
}

/** Goes to a hash route of the dashboard and waits for its heading. */
export async function show(page: Page, url: string, heading: string): Promise<void> {
  await page.goto(url);
  await page.waitForFunction((h) => document.querySelector('main h1')?.textContent?.includes(h), {}, heading);
}

/** A short description of the element that has the keyboard focus. */
export function focused(page: Page): Promise<string> {
  return page.evaluate(() => {
    const e = document.activeElement as HTMLElement | null;
    if (!e) return '';
    const label = e.getAttribute('aria-label') || (e.id && document.querySelector(`label[for="${e.id}"]`)?.textContent) || e.textContent || '';
    return `${e.tagName.toLowerCase()}:${label.trim()}`;
  });
}

/** Presses Tab until the focused element matches `want` (at most `max` presses); returns the presses. */
export async function tabTo(page: Page, want: string, max = 200): Promise<number> {
  for (let i = 1; i <= max; i++) {
    await page.keyboard.press('Tab');
    if ((await focused(page)) === want) return i;
  }
  throw new Error(`Tab never reached ${want} in ${max} presses (last: ${await focused(page)})`);
}

/**
 * axe-core's WCAG 2 A/AA rules (labels, names, contrast, landmarks...) on the page as shown.
 * Evaluated through the DevTools protocol, which the page's CSP does not govern.
 */
export async function accessibilityViolations(page: Page): Promise<string[]> {
  await page.evaluate(axe.source);
  const result = await page.evaluate(async () => {
    const r = await (window as unknown as { axe: typeof axe }).axe.run(document, { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'] } });
    return r.violations.map((v) => `${v.id}: ${v.help} (${v.nodes.map((n) => n.target.join(' ')).join(', ')})`);
  });
  return result;
}
