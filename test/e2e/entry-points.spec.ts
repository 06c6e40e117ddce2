import { execFileSync, spawnSync } from 'node:child_process';
import { join } from 'node:path';

const root = join(__dirname, '..', '..');

/** Loads a module in a fresh Node process and lists which database drivers it pulled in. */
function driversLoadedBy(request: string): string[] {
  const script = `
    require(${JSON.stringify(request)});
    const seen = new Set();
    for (const k of Object.keys(require.cache)) {
      const m = /node_modules[\\\\/](ioredis|typeorm|pg|mysql2|better-sqlite3|prom-client|@nestjs[\\\\/]terminus)[\\\\/]/.exec(k);
      if (m) seen.add(m[1].replace(/\\\\/g, '/'));
    }
    process.stdout.write(JSON.stringify([...seen].sort()));`;
  const out = execFileSync(process.execPath, ['-r', join(root, 'test/support/register.js'), '-e', script], { cwd: root, encoding: 'utf8' });
  return JSON.parse(out) as string[];
}

describe('entry points', () => {
  it('the root entry loads no database driver', () => {
    expect(driversLoadedBy('nestjs-priority-queue')).toEqual([]);
  });

  it('the /health entry loads terminus and no database driver', () => {
    expect(driversLoadedBy('nestjs-priority-queue/health')).toEqual(['@nestjs/terminus']);
  });

  it('the /redis entry loads no SQL driver', () => {
    expect(driversLoadedBy('nestjs-priority-queue/redis')).not.toEqual(expect.arrayContaining(['typeorm']));
  });

  it('the /typeorm entry loads no Redis client', () => {
    expect(driversLoadedBy('nestjs-priority-queue/typeorm')).not.toContain('ioredis');
  });

  it('the /dashboard entry loads no database driver', () => {
    expect(driversLoadedBy('nestjs-priority-queue/dashboard')).toEqual([]);
  });

  it('core imports nothing from @nestjs, typeorm or ioredis', () => {
    const r = spawnSync('grep', ['-rlE', "(from|require\\()\\s*'(@nestjs/|typeorm|ioredis)", join(root, 'libs/priority-queue/src/core')], {
      encoding: 'utf8',
    });
    expect(r.stdout).toBe('');
    expect(r.status).toBe(1); // grep: no match
  });
});
