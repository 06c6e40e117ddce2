import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
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

/** Names each entry point exports at run time (types are checked by npm run typecheck and the package test). */
function runtimeExports(request: string): string[] {
  const script = `process.stdout.write(JSON.stringify(Object.keys(require(${JSON.stringify(request)})).sort()))`;
  const out = execFileSync(process.execPath, ['-r', join(root, 'test/support/register.js'), '-e', script], { cwd: root, encoding: 'utf8' });
  return JSON.parse(out) as string[];
}

/**
 * The curated public API. A new export goes here, in libs/priority-queue/src/index.ts and in the
 * package README; an internal (order keys, GCRA, lane keys, validation helpers, the core queue and
 * worker, event transports) stays out and is imported by tests by relative path
 * (libs/priority-queue/src/...); the package name is used only for what the package exports.
 */
const ROOT_EXPORTS = [
  'ALL_STATUSES', 'AdmissionGuard', 'ConfigurationError', 'DEFAULT_QUEUE_NAME', 'DeadlinePassedError', 'FairTagOverflowError', 'HandlerRegistrationError',
  'IN_FLIGHT_STATUSES', 'IdempotencyConflictError', 'InjectAdmissionGuard', 'InjectTaskManager', 'InjectTaskStore', 'InvalidStateError', 'LeaseExpiredError',
  'MemoryTaskStore', 'NotSubmittedError', 'NotSupportedByStoreError', 'OnTaskEvent', 'PRIORITY_QUEUE_STORE', 'PermanentError', 'PriorityQueueError',
  'PriorityQueueExceptionFilter', 'PriorityQueueMetrics', 'PriorityQueueModule', 'PriorityQueueRegistry', 'PriorityTask', 'QueueNotFoundError',
  'StaleLeaseError', 'StoreClosedError', 'StoreUnavailableError', 'TERMINAL_STATUSES', 'TaskManager', 'TaskNotFoundError', 'TaskStatus',
  'UnknownTaskTypeError', 'ValidationError', 'WaitTimeoutError', 'WrongQueueError', 'getAdmissionGuardToken', 'getTaskManagerToken',
  'getTaskStoreToken', 'isInFlight', 'isTerminal', 'memoryStore',
];

describe('entry points', () => {
  it('the root exports the curated public API and no internal', () => {
    const names = runtimeExports('nestjs-priority-queue');
    expect(names).toEqual([...ROOT_EXPORTS].sort());
    for (const internal of ['gcra', 'laneKey', 'KEY_SEPARATOR', 'accountKey', 'encodeOrderKey', 'compareOrder', 'PriorityQueue', 'Worker', 'TaskTypeRegistry', 'Messages', 'validateSubmitInput', 'ManualClock', 'createStore']) {
      expect(names).not.toContain(internal);
    }
  });

  it('the /redis and /typeorm entries export their store and its factory, nothing of its internals', () => {
    expect(runtimeExports('nestjs-priority-queue/redis')).toEqual(['RedisTaskStore', 'redisStore']);
    expect(runtimeExports('nestjs-priority-queue/typeorm')).toEqual(['TypeOrmTaskStore', 'priorityQueueMigrations', 'typeormStore']);
  });

  it('internals are reachable in the workspace only: the package exports no source folder', () => {
    expect(runtimeExports(join(root, 'libs/priority-queue/src/core'))).toEqual(expect.arrayContaining(['gcra', 'laneKey', 'PriorityQueue', 'Worker']));
    const mapper = (require(join(root, 'jest.config.js')) as { moduleNameMapper: Record<string, string> }).moduleNameMapper;
    expect(mapper['^nestjs-priority-queue$']).toBe('<rootDir>/libs/priority-queue/src');
    const pkg = require(join(root, 'libs/priority-queue/package.json')) as { exports: Record<string, unknown> };
    expect(Object.keys(pkg.exports).sort()).toEqual(['.', './dashboard', './health', './package.json', './redis', './typeorm']);
  });

  it('tests and scripts reach internals by relative path, never through the package name', () => {
    const files = execFileSync('git', ['ls-files', 'test', 'scripts', 'apps'], { cwd: root, encoding: 'utf8' }).split('\n').filter((f) => /\.[cm]?[jt]s$/.test(f));
    const internal = /['"]nestjs-priority-queue\/(?!(redis|typeorm|health|dashboard)['"])[^'"]+['"]/;
    const offenders = files.filter((f) => f !== 'test/support/register.js' && internal.test(readFileSync(join(root, f), 'utf8')));
    expect(offenders).toEqual([]);
  });

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
