import { createHash, randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * Installs, Node.js binaries and packed tarballs of the compatibility tests live here, each
 * under a key made of everything that decides its content (pins, Node version, sources), so a
 * second run reuses them and a changed pin makes a new entry. Set PQ_COMPAT_CACHE to move it.
 */
export const CACHE_ROOT = process.env.PQ_COMPAT_CACHE ?? join(tmpdir(), 'pq-compat-cache');

const DONE = '.pq-cache-complete';

export function cacheKey(parts: unknown): string {
  return createHash('sha256').update(JSON.stringify(parts)).digest('hex').slice(0, 16);
}

/**
 * The directory of `name`, built by `build` on first use. Builders write into a private temp
 * directory that is renamed into place when complete, so concurrent runs never see half an entry
 * (two runs racing both build; the first rename wins).
 */
export async function cached(name: string, build: (dir: string) => Promise<void>): Promise<{ dir: string; hit: boolean }> {
  const dir = join(CACHE_ROOT, name);
  if (existsSync(join(dir, DONE))) return { dir, hit: true };
  mkdirSync(CACHE_ROOT, { recursive: true });
  const tmp = join(CACHE_ROOT, `.tmp-${name}-${randomUUID().slice(0, 8)}`);
  mkdirSync(tmp, { recursive: true });
  try {
    await build(tmp);
    writeFileSync(join(tmp, DONE), new Date().toISOString());
    if (existsSync(dir) && !existsSync(join(dir, DONE))) rmSync(dir, { recursive: true, force: true });
    try {
      renameSync(tmp, dir);
    } catch (e) {
      if (!existsSync(join(dir, DONE))) throw e;
    }
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
  return { dir, hit: false };
}

/**
 * Removes entries named `prefix*` last built more than `maxAgeMs` ago, except `keep`: packed
 * tarballs pile up (one per source state), pinned installs do not.
 */
export function evictStale(prefix: string, maxAgeMs: number, keep: string): void {
  if (!existsSync(CACHE_ROOT)) return;
  for (const name of readdirSync(CACHE_ROOT)) {
    if (!name.startsWith(prefix) || name === keep) continue;
    const done = join(CACHE_ROOT, name, DONE);
    if (existsSync(done) && Date.now() - statSync(done).mtimeMs > maxAgeMs) rmSync(join(CACHE_ROOT, name), { recursive: true, force: true });
  }
}
