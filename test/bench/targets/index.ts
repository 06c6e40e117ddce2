import type { BenchEnv, BenchTarget, ServerKind } from '../target';
import { removeOnCompleteFromEnv } from './remove-on-complete';

export interface TargetEntry {
  id: string;
  server: ServerKind;
  load: () => (env: BenchEnv) => BenchTarget;
  /** Run only when named in --targets. */
  optional?: boolean;
}

/**
 * Every target the runner knows, in table order. Factories are loaded lazily, so a store that
 * does not exist yet (or a driver that fails to load) only fails its own column.
 */
const BASE: TargetEntry[] = [
  { id: 'ours-memory', server: 'memory', load: () => require('./ours-memory').ourMemoryTarget },
  { id: 'ours-redis', server: 'redis', load: () => require('./ours-redis').ourRedisTarget },
  { id: 'bullmq', server: 'redis', load: () => require('./bullmq').bullmqTarget },
  { id: 'ours-postgres', server: 'postgres', load: () => require('./ours-typeorm').ourPostgresTarget },
  { id: 'graphile-worker', server: 'postgres', load: () => require('./graphile-worker').graphileWorkerTarget },
  { id: 'pg-boss', server: 'postgres', load: () => require('./pg-boss').pgBossTarget },
  { id: 'ours-mariadb', server: 'mariadb', load: () => require('./ours-typeorm').ourMariaDbTarget },
  { id: 'ours-sqlite', server: 'sqlite', load: () => require('./ours-typeorm').ourSqliteTarget },
];

/**
 * `<id>+roc`: each of our targets with removeOnComplete (targets/remove-on-complete.ts), placed
 * right after it. Optional until the library has the option (issue 15 §1): name them in --targets.
 */
export const TARGETS: readonly TargetEntry[] = BASE.flatMap((entry) =>
  entry.id.startsWith('ours-')
    ? [
        entry,
        {
          id: `${entry.id}+roc`,
          server: entry.server,
          optional: true,
          load: () => (env: BenchEnv) => (entry.load() as (env: BenchEnv, variant: object) => BenchTarget)(env, { removeOnComplete: removeOnCompleteFromEnv() }),
        },
      ]
    : [entry],
);

/** For each of our stores, the peers measured on the same server (ratios are ours / peer). */
export const PEERS: Readonly<Record<string, string[]>> = {
  'ours-redis': ['bullmq'],
  'ours-redis+roc': ['bullmq'],
  'ours-postgres': ['graphile-worker', 'pg-boss'],
  'ours-postgres+roc': ['graphile-worker', 'pg-boss'],
};

export function createTarget(id: string, env: BenchEnv): BenchTarget {
  const entry = TARGETS.find((t) => t.id === id);
  if (!entry) throw new Error(`unknown target ${id}; known: ${TARGETS.map((t) => t.id).join(', ')}`);
  return entry.load()(env);
}
