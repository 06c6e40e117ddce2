// Jest's test order for the whole suite: the files that take a minute or more start first.
// Without timings of an earlier run (a fresh CI checkout has none) jest starts the largest files
// first, and the compat matrices are four-line files: they started last and one of them ran
// alone for the final two minutes while the other worker idled (CI log of ffd02d2: the last
// matrix from 833 s to 963 s). Seconds per file on the 2-core CI machine, cold caches.
const Sequencer = require('@jest/test-sequencer').default;
const path = require('node:path');

// The Node 22 and 24 matrices each compile better-sqlite3 for their ABI on a cold cache; the
// second compile takes the SQLite object from the first's ccache entry when it starts after the
// first is done (test/compat/support/native-prebuilds.ts), so they do not start side by side.
const SLOW_FIRST = [
  'test/compat/matrix-node24.spec.ts', // ~190 s
  'test/compat/matrix-node20.spec.ts', // ~190 s
  'test/compat/matrix-node22.spec.ts', // ~210 s
  'test/compat/next-drivers.spec.ts', // ~100-115 s
  'test/typeorm/multi-process-postgres.spec.ts', // with the next one: ~90-136 s
  'test/typeorm/multi-process-mariadb.spec.ts',
  'test/core/worker-idle.spec.ts', // ~60 s
  'test/chaos/postgres-one-connection.chaos.spec.ts', // ~50 s
];
const root = path.resolve(__dirname, '../..');
const rank = new Map(SLOW_FIRST.map((f, i) => [path.join(root, f), i]));

class SlowFirstSequencer extends Sequencer {
  async sort(tests) {
    const ordered = await super.sort(tests);
    const slow = ordered.filter((t) => rank.has(t.path)).sort((a, b) => rank.get(a.path) - rank.get(b.path));
    return [...slow, ...ordered.filter((t) => !rank.has(t.path))];
  }
}

module.exports = SlowFirstSequencer;
