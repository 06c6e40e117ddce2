/**
 * Table names of one store, derived from the table prefix (default `pq_`). Every table of the
 * store lives under the prefix; several queues share the tables (each row carries its queue).
 */
export interface TableNames {
  prefix: string;
  tasks: string;
  lanes: string;
  resources: string;
  releases: string;
  /** MySQL / MariaDB only: see sql/stage-marks.ts. */
  stageMarks: string;
  /** PostgreSQL only: lanes that got tasks created due, see schema/postgres/1-tables.sql. */
  laneMarks: string;
  queues: string;
  /** The sweep lease of each queue, see sql/sweep-lease.ts. */
  sweeps: string;
  /** DESIGN §7 fair share: V[p] per queue and level (sql/fair-tags.ts). */
  fairLevels: string;
  /** DESIGN §7 fair share: F[t,p] per queue, tenant and level (sql/fair-tags.ts). */
  fairTags: string;
  /** DESIGN §7 fair share: the queue's tenant weights (sql/limits.ts). */
  tenantWeights: string;
  schemaVersion: string;
}

export const DEFAULT_TABLE_PREFIX = 'pq_';
export const DEFAULT_QUEUE = 'default';
/** Longest queue name: the width of the schema's queue columns. */
export const MAX_QUEUE_LENGTH = 64;

const PREFIX_PATTERN = /^[A-Za-z_][A-Za-z0-9_]{0,30}$/;

export function isValidTablePrefix(prefix: string): boolean {
  return PREFIX_PATTERN.test(prefix);
}

export function tableNames(prefix: string): TableNames {
  return {
    prefix,
    tasks: `${prefix}tasks`,
    lanes: `${prefix}lanes`,
    resources: `${prefix}resources`,
    releases: `${prefix}releases`,
    stageMarks: `${prefix}stage_marks`,
    laneMarks: `${prefix}lane_marks`,
    queues: `${prefix}queues`,
    sweeps: `${prefix}sweeps`,
    fairLevels: `${prefix}fair_levels`,
    fairTags: `${prefix}fair_tags`,
    tenantWeights: `${prefix}tenant_weights`,
    schemaVersion: `${prefix}schema_version`,
  };
}

/**
 * PostgreSQL NOTIFY channel of one queue: `<prefix><kind>_<16 hex of sha1(prefix NUL queue)>`
 * (at most 31 + 7 + 17 characters, under PostgreSQL's 63). `hash` is that sha1.
 */
export function notifyChannel(prefix: string, hash: Buffer, kind: 'wake' | 'events'): string {
  return `${prefix}${kind}_${hash.toString('hex').slice(0, 16)}`;
}

/**
 * Payload of a create's NOTIFY on the wake channel: only submissions may have become claimable
 * (subscribe()'s WakeReason 'submissions'). Every other wake NOTIFY has the empty payload.
 */
export const SUBMISSIONS_WAKE = 's';
