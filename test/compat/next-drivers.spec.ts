import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { NEXT_DRIVERS } from './matrix';
import { cached } from './support/cache';
import { nodeRuntime } from './support/node-runtime';
import { runOrFail, type RunResult } from './support/run';
import { REPO_ROOT } from './support/tarball';

/**
 * The library's store contract suites (and the TypeORM Nest e2e) with the next majors of the
 * drivers in place of the workspace's: typeorm 1 on PostgreSQL, MariaDB and SQLite, ioredis 6 with
 * its defaults (RESP3) and with `replyMapping: 'resp3'` (maps as objects). The compatibility apps
 * reach only SQLite and Redis; this covers the peer ranges' other dialects. Each driver is
 * installed alone in the cache (typeorm 1.1 and ioredis 6 cannot share a tree without an npm
 * override, see matrix.ts) and jest maps the workspace's `typeorm` / `ioredis` onto them; the SQL
 * drivers (pg, mysql2, better-sqlite3) stay the workspace's.
 */
describe(`store contract suites on typeorm ${NEXT_DRIVERS.typeorm} and ioredis ${NEXT_DRIVERS.ioredis}`, () => {
  let dirs: { typeorm: string; ioredis: string };
  let configDir: string;

  beforeAll(async () => {
    const node = await nodeRuntime({ major: 20, version: 'system' });
    const install = async (pkg: string, version: string) =>
      (
        await cached(`driver-${pkg}-${version}-node${node.version}`, async (dir) => {
          writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: `pq-next-${pkg}`, private: true }));
          await runOrFail(`${pkg} ${version}`, 'npm install', node.npm[0], [node.npm[1], 'install', `${pkg}@${version}`], { cwd: dir, env: node.env, timeoutMs: 10 * 60_000 });
        })
      ).dir;
    const [typeorm, ioredis] = await Promise.all([install('typeorm', NEXT_DRIVERS.typeorm), install('ioredis', NEXT_DRIVERS.ioredis)]); // two cache entries, two npm installs side by side
    dirs = { typeorm, ioredis };
    configDir = mkdtempSync(join(tmpdir(), 'pq-next-drivers-'));
    const base = join(REPO_ROOT, 'jest.config.js');
    writeFileSync(
      join(configDir, 'jest.config.js'),
      `const base = require(${JSON.stringify(base)});
module.exports = {
  ...base,
  moduleNameMapper: {
    '^typeorm$': ${JSON.stringify(join(dirs.typeorm, 'node_modules/typeorm'))},
    '^typeorm/(.*)$': ${JSON.stringify(join(dirs.typeorm, 'node_modules/typeorm/$1'))},
    '^ioredis$': ${JSON.stringify(join(dirs.ioredis, 'node_modules/ioredis'))},
    '^ioredis/(.*)$': ${JSON.stringify(join(dirs.ioredis, 'node_modules/ioredis/$1'))},
    '^(pg|mysql2|better-sqlite3)$': ${JSON.stringify(join(REPO_ROOT, 'node_modules/$1'))},
    ...base.moduleNameMapper,
  },
};
`,
    );
  }, 15 * 60_000);

  afterAll(() => {
    if (configDir) rmSync(configDir, { recursive: true, force: true });
  });

  const jest = (what: string, specs: string[], env: NodeJS.ProcessEnv = {}): Promise<RunResult> =>
    runOrFail(what, 'jest', process.execPath, [join(REPO_ROOT, 'node_modules/jest/bin/jest.js'), '--ci', '--maxWorkers=1', '-c', join(configDir, 'jest.config.js'), ...specs], {
      cwd: REPO_ROOT,
      env: { ...process.env, ...env },
      timeoutMs: 15 * 60_000,
    });

  it('the drivers jest loads are the next majors', async () => {
    const probe = join(configDir, 'versions.spec.ts');
    writeFileSync(
      probe,
      `it('versions', () => { console.log('PQ-VERSIONS', require('typeorm/package.json').version, require('ioredis/package.json').version); });\n`,
    );
    const r = await jest('[driver versions]', ['--roots', configDir, '--testMatch', '**/versions.spec.ts']);
    expect(r.output).toContain(`PQ-VERSIONS ${NEXT_DRIVERS.typeorm} ${NEXT_DRIVERS.ioredis}`);
  }, 5 * 60_000);

  it(`TypeORM store contract on PostgreSQL, MariaDB and SQLite, and the Nest e2e, on typeorm ${NEXT_DRIVERS.typeorm}`, async () => {
    const r = await jest(`[TypeORM store on typeorm ${NEXT_DRIVERS.typeorm}]`, [
      'test/contract/typeorm-postgres.contract.spec.ts',
      'test/contract/typeorm-mariadb.contract.spec.ts',
      'test/contract/typeorm-sqlite.contract.spec.ts',
      'test/e2e/typeorm-nest.e2e.spec.ts',
    ]);
    expect(r.output).toMatch(/Test Suites: 4 passed, 4 total/);
  }, 15 * 60_000);

  it(`Redis store contract on ioredis ${NEXT_DRIVERS.ioredis}, with its default replies and with replyMapping 'resp3'`, async () => {
    const spec = ['test/contract/redis.contract.spec.ts'];
    const plain = await jest(`[Redis store on ioredis ${NEXT_DRIVERS.ioredis}]`, spec);
    expect(plain.output).toMatch(/Test Suites: 1 passed, 1 total/);
    const resp3 = await jest(`[Redis store on ioredis ${NEXT_DRIVERS.ioredis}, replyMapping 'resp3']`, spec, { PQ_TEST_REDIS_OPTIONS: '{"replyMapping":"resp3"}' });
    expect(resp3.output).toMatch(/Test Suites: 1 passed, 1 total/);
  }, 15 * 60_000);
});
