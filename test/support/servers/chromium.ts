import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import puppeteer, { type Browser } from 'puppeteer-core';
import { ensureBinary } from './common';

/**
 * Debian's Chromium (package `chromium`, installed when missing as root, else the error says the
 * command), driven by puppeteer-core: no browser download. Headless, in a fresh profile, with
 * every background connection off (this machine's network is closed).
 */
export function chromiumBinary(): string {
  return ensureBinary(['chromium', '/usr/bin/chromium'], 'chromium');
}

export interface ChromiumHandle {
  browser: Browser;
  close(): Promise<void>;
}

export async function launchChromium(): Promise<ChromiumHandle> {
  const profile = mkdtempSync(join(tmpdir(), 'pq-chromium-'));
  const browser = await puppeteer.launch({
    executablePath: chromiumBinary(),
    headless: true,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      `--user-data-dir=${profile}`,
    ],
  });
  return {
    browser,
    async close() {
      await browser.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}
