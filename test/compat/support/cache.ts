import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { installOnceAsync, isInstalled } from '../../support/node-builds';

/**
 * Installs, Node.js builds and packed tarballs of the compatibility tests live here, each under
 * a key made of everything that decides its content (pins, Node version, sources), so a second
 * run reuses them and a changed pin makes a new entry. Set PQ_COMPAT_CACHE to move it.
 */
export const CACHE_ROOT = process.env.PQ_COMPAT_CACHE ?? join(tmpdir(), 'pq-compat-cache');

export function cacheKey(parts: unknown): string {
  return createHash('sha256').update(JSON.stringify(parts)).digest('hex').slice(0, 16);
}

/** Every file below `dir`. */
export function filesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? filesUnder(join(dir, e.name)) : [join(dir, e.name)]));
}

/** Hash of the names (relative to `root`) and contents of `files`, for a cache key. */
export function hashOfFiles(files: string[], root: string): string {
  const h = createHash('sha256');
  for (const f of [...files].sort()) h.update(relative(root, f)).update('\0').update(readFileSync(f)).update('\0');
  return h.digest('hex').slice(0, 16);
}

/**
 * The directory of `name`, built by `build` on first use (into a temp directory renamed into
 * place when complete: test/support/node-builds.ts).
 */
export async function cached(name: string, build: (dir: string) => Promise<void>): Promise<{ dir: string; hit: boolean }> {
  const dir = join(CACHE_ROOT, name);
  const hit = await installOnceAsync(dir, build);
  return { dir, hit };
}

/**
 * Removes entries named `prefix*` built more than `maxAgeMs` ago, except `keep`: packed tarballs
 * pile up (one per source state), pinned installs do not.
 */
export function evictStale(prefix: string, maxAgeMs: number, keep: string): void {
  if (!existsSync(CACHE_ROOT)) return;
  for (const name of readdirSync(CACHE_ROOT)) {
    const dir = join(CACHE_ROOT, name);
    if (!name.startsWith(prefix) || name === keep || name.includes('.tmp-') || !isInstalled(dir)) continue;
    if (Date.now() - statSync(dir).mtimeMs > maxAgeMs) rmSync(dir, { recursive: true, force: true });
  }
}
