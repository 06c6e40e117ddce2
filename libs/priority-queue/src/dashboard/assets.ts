import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The page's files, shipped in the package next to this module (dist/dashboard/assets): one
 * HTML shell, one script, one stylesheet. Read once; served with a content hash in their URL so
 * a browser may keep them, and a new version is fetched after an upgrade.
 */
export interface Asset {
  body: string;
  contentType: string;
  hash: string;
}

const TYPES: Record<string, string> = {
  'app.js': 'text/javascript; charset=utf-8',
  'app.css': 'text/css; charset=utf-8',
  'index.html': 'text/html; charset=utf-8',
};

export const ASSET_DIR = join(__dirname, 'assets');

let cache: Map<string, Asset> | null = null;

function load(): Map<string, Asset> {
  if (cache) return cache;
  const out = new Map<string, Asset>();
  for (const [name, contentType] of Object.entries(TYPES)) {
    const body = readFileSync(join(ASSET_DIR, name), 'utf8');
    out.set(name, { body, contentType, hash: createHash('sha256').update(body).digest('hex').slice(0, 12) });
  }
  cache = out;
  return out;
}

/** app.js or app.css; null for any other name (no path is ever read from a request). */
export function asset(name: string): Asset | null {
  return name === 'index.html' ? null : load().get(name) ?? null;
}

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/**
 * The HTML shell. `base` is the dashboard's root relative to the requested URL ('./' when the
 * URL ends with '/', else '<last segment>/'), so it works below any prefix or proxy path.
 */
export function page(base: string, title: string): string {
  const files = load();
  const vars: Record<string, string> = {
    BASE: escapeHtml(base),
    TITLE: escapeHtml(title),
    JS_HASH: files.get('app.js')!.hash,
    CSS_HASH: files.get('app.css')!.hash,
  };
  return files.get('index.html')!.body.replace(/\{\{(\w+)\}\}/g, (_, k: string) => vars[k] ?? '');
}

/** Security headers of every dashboard response: nothing inline, nothing from elsewhere. */
export const PAGE_HEADERS: Record<string, string> = {
  'content-security-policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'cache-control': 'no-store',
};
