/**
 * Everything the library defines, public or internal, for tests and benchmarks:
 * `import { gcra, PriorityQueue } from '@pq/internal'` (alias in tsconfig.json, jest.config.js and
 * test/support/register.js). The package root `nestjs-priority-queue` is the curated public API
 * (libs/priority-queue/src/index.ts); import internals from here or by relative path, never from it.
 */
export * from '../../libs/priority-queue/src/core';
export * from '../../libs/priority-queue/src/nest';
export * from '../../libs/priority-queue/src/stores/memory';
