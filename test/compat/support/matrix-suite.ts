import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startRedisServer, type RedisServerHandle } from '../../support/servers/redis-server';
import { COMBINATIONS, NODE_RUNTIMES, type NodeRuntime } from '../matrix';
import { CACHE_ROOT } from './cache';
import { CompatApp, type AppRun } from './compat-app';
import { nodeRuntime, type Runtime } from './node-runtime';
import { runOrFail } from './run';
import { packLibrary, REPO_ROOT, type PackedLibrary } from './tarball';

/** A cold first run downloads the apps' packages and compiles better-sqlite3 once per Node.js ABI: generous. */
const APP_TIMEOUT_MS = 20 * 60_000;

/**
 * Every app of the matrix under one Node.js (one test per app, so a failure names its
 * combination), plus, under a Node.js other than the system one, the library's contract suite on
 * the memory store. Results and timings go to <cache>/last-run/<label>.json.
 */
export function matrixSuite(label: keyof typeof NODE_RUNTIMES, r: NodeRuntime): void {
  describe(`compatibility matrix on Node.js ${r.version === 'system' ? `${process.versions.node} (this machine)` : r.version}`, () => {
    let redis: RedisServerHandle;
    let runtime: Runtime;
    let lib: PackedLibrary;
    const runs: AppRun[] = [];
    const extra: Record<string, number> = {};

    const combinations = COMBINATIONS.filter((x) => !x.nodes || x.nodes.includes(label));

    beforeAll(async () => {
      [redis, runtime, lib] = await Promise.all([startRedisServer(), nodeRuntime(r), packLibrary()]);
      for (const c of combinations) new CompatApp(c, runtime, lib).prefetch(); // the apps' installs side by side
    }, APP_TIMEOUT_MS);

    afterAll(async () => {
      await redis?.stop();
      mkdirSync(join(CACHE_ROOT, 'last-run'), { recursive: true });
      writeFileSync(join(CACHE_ROOT, 'last-run', `${label}.json`), JSON.stringify({ node: runtime?.version, tarballBytes: lib?.sizeBytes, runs, extra }, null, 2));
    });

    for (const c of combinations) {
      it(`${c.title}: installs with plain npm install, compiles, and each store runs its steps`, async () => {
        const app = new CompatApp(c, runtime, lib);
        try {
          const result = await app.runAll({ COMPAT_REDIS_URL: redis.url, COMPAT_STORES: 'memory,redis,sqlite' });
          runs.push(result);
          // the pins are what npm installed (a range that resolved elsewhere would make the matrix lie)
          for (const [pkg, version] of Object.entries(c.dependencies)) expect({ pkg, installed: app.installedVersion(pkg) }).toEqual({ pkg, installed: version });
          const ran = result.results.map((x) => `${x.store}: ${x.step}`);
          for (const store of ['memory', 'redis', 'sqlite']) {
            for (const step of ['handler reaches SUCCEEDED', 'named queues, @OnTaskEvent, waitFor', 'health indicator (@nestjs/terminus)', 'exception filter over HTTP', 'dashboard page and API']) {
              expect(ran).toContain(`${store}: ${step}`);
            }
          }
        } finally {
          app.dispose();
        }
      }, APP_TIMEOUT_MS);
    }

    if (r.version !== 'system') {
      it('runs the library contract suite on the memory store', async () => {
        const jest = join(REPO_ROOT, 'node_modules', 'jest', 'bin', 'jest.js');
        const what = `[library contract suite, memory store] on ${runtime.label}`;
        const res = await runOrFail(what, 'jest', runtime.node, [jest, '--ci', '--maxWorkers=1', 'test/contract/memory.contract.spec.ts'], {
          cwd: REPO_ROOT,
          env: runtime.env,
          timeoutMs: 10 * 60_000,
        });
        extra.memoryContractMs = res.ms;
        expect(res.output).toMatch(/Tests:\s+\d+ passed, \d+ total/);
      }, 10 * 60_000);
    }
  });
}
