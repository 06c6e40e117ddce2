/**
 * PostgreSQL CPU per task of create + claim + complete for several table layouts, with plain SQL
 * on scratch tables (a model of the hot statements, not the store): how much would a layout
 * change save before anyone writes the migration? One connection, statements run back to back
 * (named prepared statements), CPU = that backend's utime + stime from /proc (the server must
 * run on this machine), plus a VACUUM of the tables after the run (the clean-up of the dead
 * versions the layout leaves, which autovacuum would otherwise do later).
 *
 * Variants (prefix `ls_<v>_`):
 *   a  v5 layout (pg_dump of the store's schema v5 indexes); claim = the v3 lane step (rows from
 *      the lane head by the lane index, UPDATE by ctid, new versions returned); complete = UPDATE
 *      by ctid joined to the batch arrays (complete_leased)
 *   b  a, complete = DELETE by ctid (graphile-worker style: terminal rows gone)
 *   c  HOT: fillfactor 70, no index of `tasks` has status (or any column a claim or complete
 *      writes) in its key or predicate: only the primary key (id) stays; the pending order is a
 *      separate table `pending` (lane index) whose row is deleted at claim; claim and complete
 *      are HOT updates by id. Upper bound: recovery (lease index), purge (finished index) and
 *      list/stats (status index) would need other structures.
 *   c2 c + the lease index (queue, lease_until) WHERE lease_until IS NOT NULL and the finished
 *      index back on `tasks` (what recovery and purge need): claim and complete not HOT again
 *   d  a, complete = DELETE from tasks + INSERT the terminal row into `done` (id primary key,
 *      finished index): terminal rows stay readable (get() would read both tables)
 *   e  a without the status_rest and submitting_nolease indexes (list/stats of terminal
 *      statuses through the finished index): complete writes 2 index entries instead of 3
 *
 * `node -r ./test/support/register.js test/bench/profile/pg-layout-study.ts <postgres url | -> [tasks=20000] [claim=32] [completeBatch=16] [rounds=3] [variants=a,b,c,c2,d,e]`
 * (`-`: starts its own throw-away server, test/support/servers/postgres-server.ts)
 */
import { readFileSync } from 'node:fs';
import { Client } from 'pg';
import { startPostgresServer } from '../../support/servers/postgres-server';

const TICK_US = 10_000;

function ticksOf(pid: number): number {
  const s = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = s.slice(s.lastIndexOf(')') + 2).split(' ');
  return Number(f[11]) + Number(f[12]);
}

const COLS = `seq bigserial NOT NULL, id varchar(255) NOT NULL, queue varchar(64) NOT NULL, idempotency_key varchar(255),
  type varchar(255) NOT NULL, payload text, priority integer NOT NULL, k1 bigint NOT NULL, k2 bigint NOT NULL,
  run_at bigint NOT NULL, deadline_at bigint, created_at bigint NOT NULL, status varchar(16) NOT NULL, staged smallint NOT NULL,
  lane_key varchar(64) NOT NULL, provider_key varchar(255) NOT NULL, account_id varchar(255), tenant_id varchar(255),
  concurrency_key varchar(255), version integer NOT NULL, attempts integer NOT NULL, max_attempts integer NOT NULL,
  idempotent smallint NOT NULL, lease_owner varchar(255), lease_id varchar(600), lease_until bigint, result text, error text,
  external_id varchar(1024), next_poll_at bigint, poll_errors integer NOT NULL, cancel_requested smallint NOT NULL,
  updated_at bigint NOT NULL, finished_at bigint`;

function v5Indexes(T: string, opts: { statusRest: boolean }): string[] {
  return [
    `ALTER TABLE ${T} ADD PRIMARY KEY (id)`,
    `CREATE INDEX ${T}_cancel ON ${T} (queue) WHERE cancel_requested = 1 AND status IN ('SUBMITTED', 'RUNNING')`,
    `CREATE INDEX ${T}_deadline ON ${T} (queue, deadline_at) WHERE deadline_at IS NOT NULL AND status IN ('PENDING_SUBMIT', 'SUBMITTING', 'SUBMITTED', 'RUNNING')`,
    `CREATE INDEX ${T}_finished ON ${T} (queue, finished_at) WHERE finished_at IS NOT NULL`,
    `CREATE UNIQUE INDEX ${T}_idem ON ${T} (queue, idempotency_key) WHERE idempotency_key IS NOT NULL`,
    `CREATE INDEX ${T}_lane ON ${T} (queue, lane_key, k1, k2, run_at, created_at, seq) WHERE status = 'PENDING_SUBMIT' AND staged = 0`,
    `CREATE INDEX ${T}_lease ON ${T} (queue, lease_until) WHERE lease_until IS NOT NULL AND status IN ('SUBMITTING', 'SUBMITTED', 'RUNNING')`,
    `CREATE INDEX ${T}_poll ON ${T} (queue, next_poll_at) WHERE status IN ('SUBMITTED', 'RUNNING')`,
    `CREATE INDEX ${T}_staged ON ${T} (queue, run_at) WHERE status = 'PENDING_SUBMIT' AND staged = 1`,
    ...(opts.statusRest
      ? [
          `CREATE INDEX ${T}_status_rest ON ${T} ((queue || chr(31) || status), seq) WHERE status NOT IN ('PENDING_SUBMIT', 'SUBMITTING')`,
          `CREATE INDEX ${T}_submitting_nolease ON ${T} (queue, seq) WHERE status = 'SUBMITTING' AND lease_until IS NULL`,
        ]
      : []),
  ];
}

interface Variant {
  ddl: string[];
  insert: string; // $1 ids varchar[], $2 priorities int[], $3 now
  claim: string; // $1 limit, $2 now, $3 owner, head key $4..$8 -> rows (tid, id, version, keys...)
  complete: string; // $1 tids tid[], $2 ids varchar[], $3 leases varchar[], $4 versions int[], $5 now
  tables: string[];
}

const ORDER = 'k1, k2, run_at, created_at, seq';
const RET = 'x.ctid AS tid, x.id, x.version, x.seq, x.type, x.payload, x.priority, x.run_at, x.created_at, x.k1, x.k2, x.attempts, x.max_attempts';
const CLAIM_SET = `status = 'SUBMITTING', lease_owner = $3, lease_id = 'b:' || x.id, lease_until = $2::bigint + 30000, version = x.version + 1, updated_at = $2::bigint`;
const DONE_SET = `status = 'SUCCEEDED', result = NULL, error = NULL, finished_at = $5::bigint, lease_owner = NULL, lease_id = NULL, lease_until = NULL, version = x.version + 1, updated_at = $5::bigint`;
const BATCH = `unnest($1::tid[], $2::varchar[], $3::varchar[], $4::integer[]) AS i(tid, id, lease_id, version)`;
const FENCE = `x.ctid = i.tid AND x.id = i.id AND x.lease_id = i.lease_id AND x.version = i.version`;

function insertInto(T: string, extra = ''): string {
  return `INSERT INTO ${T} (id, queue, type, payload, priority, k1, k2, run_at, created_at, status, staged, lane_key, provider_key,
      version, attempts, max_attempts, idempotent, poll_errors, cancel_requested, updated_at)
    SELECT u.id, 'q', 'bench', '{"i":1,"p":2}', u.p, -u.p, -u.p, $3::bigint, $3::bigint, 'PENDING_SUBMIT', 0, 'L', 'bench', 1, 0, 5, 1, 0, 0, $3::bigint
    FROM unnest($1::varchar[], $2::integer[]) WITH ORDINALITY AS u(id, p, o) ORDER BY u.o
    RETURNING id, seq, k1, k2, run_at, created_at${extra}`;
}

function v5Claim(T: string): string {
  return `WITH c AS (SELECT ctid AS t FROM ${T} WHERE queue = 'q' AND status = 'PENDING_SUBMIT' AND staged = 0 AND lane_key = 'L'
      AND (${ORDER}) >= ($4::bigint, $5::bigint, $6::bigint, $7::bigint, $8::bigint) ORDER BY ${ORDER} LIMIT $1)
    UPDATE ${T} x SET ${CLAIM_SET} FROM c WHERE x.ctid = c.t AND x.status || '' = 'PENDING_SUBMIT' AND x.staged + 0 = 0
    RETURNING ${RET}`;
}

function variants(): Record<string, Variant> {
  const a = (v: string, opts: { statusRest: boolean }, complete: (T: string) => string, extraTables: (T: string) => string[] = () => []): Variant => {
    const T = `ls_${v}_tasks`;
    return {
      ddl: [`CREATE TABLE ${T} (${COLS})`, ...v5Indexes(T, opts), ...extraTables(T)],
      insert: insertInto(T),
      claim: v5Claim(T),
      complete: complete(T),
      tables: [T, ...extraTables(T).filter((s) => s.startsWith('CREATE TABLE')).map((s) => s.split(' ')[2])],
    };
  };
  const hot = (v: string, withLeaseAndFinished: boolean): Variant => {
    const T = `ls_${v}_tasks`;
    const P = `ls_${v}_pending`;
    return {
      ddl: [
        `CREATE TABLE ${T} (${COLS}) WITH (fillfactor = 70)`,
        `ALTER TABLE ${T} ADD PRIMARY KEY (id)`,
        `CREATE UNIQUE INDEX ${T}_idem ON ${T} (queue, idempotency_key) WHERE idempotency_key IS NOT NULL`,
        ...(withLeaseAndFinished
          ? [
              `CREATE INDEX ${T}_lease ON ${T} (queue, lease_until) WHERE lease_until IS NOT NULL`,
              `CREATE INDEX ${T}_finished ON ${T} (queue, finished_at) WHERE finished_at IS NOT NULL`,
            ]
          : []),
        `CREATE TABLE ${P} (queue varchar(64) NOT NULL, lane_key varchar(64) NOT NULL, k1 bigint NOT NULL, k2 bigint NOT NULL,
          run_at bigint NOT NULL, created_at bigint NOT NULL, seq bigint NOT NULL, id varchar(255) NOT NULL)`,
        `CREATE INDEX ${P}_lane ON ${P} (queue, lane_key, k1, k2, run_at, created_at, seq)`,
      ],
      insert: `WITH ins AS (${insertInto(T, ', queue, lane_key')}),
        p AS (INSERT INTO ${P} SELECT queue, lane_key, k1, k2, run_at, created_at, seq, id FROM ins)
        SELECT id, seq FROM ins`,
      claim: `WITH c AS (SELECT ctid AS t FROM ${P} WHERE queue = 'q' AND lane_key = 'L'
          AND (${ORDER}) >= ($4::bigint, $5::bigint, $6::bigint, $7::bigint, $8::bigint) ORDER BY ${ORDER} LIMIT $1),
        d AS (DELETE FROM ${P} p USING c WHERE p.ctid = c.t RETURNING p.id)
        UPDATE ${T} x SET ${CLAIM_SET} FROM d WHERE x.id = d.id AND x.status = 'PENDING_SUBMIT'
        RETURNING ${RET}`,
      complete: `UPDATE ${T} x SET ${DONE_SET} FROM ${BATCH} WHERE ${FENCE}
        RETURNING x.id, x.finished_at`,
      tables: [T, P],
    };
  };
  return {
    a: a('a', { statusRest: true }, (T) => `UPDATE ${T} x SET ${DONE_SET} FROM ${BATCH} WHERE ${FENCE} RETURNING x.id, x.finished_at`),
    b: a('b', { statusRest: true }, (T) => `DELETE FROM ${T} x USING ${BATCH} WHERE ${FENCE} RETURNING x.id, $5::bigint AS finished_at`),
    c: hot('c', false),
    c2: hot('c2', true),
    d: a(
      'd',
      { statusRest: true },
      (T) => `WITH g AS (DELETE FROM ${T} x USING ${BATCH} WHERE ${FENCE} RETURNING x.*)
        INSERT INTO ${T}_done SELECT seq, id, queue, idempotency_key, type, payload, priority, k1, k2, run_at, deadline_at, created_at,
          'SUCCEEDED', staged, lane_key, provider_key, account_id, tenant_id, concurrency_key, version + 1, attempts, max_attempts,
          idempotent, NULL, NULL, NULL, NULL, NULL, external_id, next_poll_at, poll_errors, cancel_requested, $5::bigint, $5::bigint FROM g
        RETURNING id, finished_at`,
      (T) => [
        `CREATE TABLE ${T}_done (${COLS.replace('bigserial', 'bigint')})`,
        `ALTER TABLE ${T}_done ADD PRIMARY KEY (id)`,
        `CREATE INDEX ${T}_done_finished ON ${T}_done (queue, finished_at)`,
        `CREATE INDEX ${T}_done_status ON ${T}_done ((queue || chr(31) || status), seq)`,
      ],
    ),
    e: a('e', { statusRest: false }, (T) => `UPDATE ${T} x SET ${DONE_SET} FROM ${BATCH} WHERE ${FENCE} RETURNING x.id, x.finished_at`),
  };
}

interface Result {
  insertUs: number;
  claimUs: number;
  completeUs: number;
  vacuumUs: number;
}

async function runVariant(client: Client, pid: number, name: string, v: Variant, n: number, claimN: number, batchN: number, round: number): Promise<Result> {
  for (const t of [...v.tables].reverse()) await client.query(`DROP TABLE IF EXISTS ${t} CASCADE`);
  for (const s of v.ddl) await client.query(s);
  const tag = `${name}_${round}`;
  let now = Date.now();
  // create: chunks of 1,000 like the bench's submitMany
  let t0 = ticksOf(pid);
  for (let i = 0; i < n; i += 1000) {
    const ids = Array.from({ length: Math.min(1000, n - i) }, (_, k) => `t-${round}-${i + k}`);
    await client.query({ name: `ins_${tag}`, text: v.insert, values: [ids, ids.map((_, k) => (i + k) % 10), now] });
  }
  const insertTicks = ticksOf(pid) - t0;
  let head: Array<string | number> = ['-9223372036854775807', '0', '0', '0', '0'];
  let claimTicks = 0;
  let completeTicks = 0;
  let done = 0;
  for (;;) {
    now++;
    t0 = ticksOf(pid);
    const r = await client.query({ name: `cl_${tag}`, text: v.claim, values: [claimN, now, 'w', ...head] });
    const t1 = ticksOf(pid);
    claimTicks += t1 - t0;
    if (r.rows.length === 0) break;
    const rows = r.rows.sort((x, y) => Number(x.k1) - Number(y.k1) || Number(x.seq) - Number(y.seq));
    const last = rows[rows.length - 1];
    head = [last.k1, last.k2, last.run_at, last.created_at, String(Number(last.seq) + 1)];
    for (let i = 0; i < rows.length; i += batchN) {
      const b = rows.slice(i, i + batchN);
      const c0 = ticksOf(pid);
      const out = await client.query({
        name: `co_${tag}`,
        text: v.complete,
        values: [b.map((x) => x.tid), b.map((x) => x.id), b.map((x) => `b:${x.id}`), b.map((x) => x.version), now],
      });
      completeTicks += ticksOf(pid) - c0;
      if (out.rows.length !== b.length) throw new Error(`${name}: completed ${out.rows.length} of ${b.length}`);
      done += b.length;
    }
  }
  if (done !== n) throw new Error(`${name}: drained ${done} of ${n}`);
  t0 = ticksOf(pid);
  for (const t of v.tables) await client.query(`VACUUM ${t}`);
  const vacuumTicks = ticksOf(pid) - t0;
  const us = (t: number) => (t * TICK_US) / n;
  return { insertUs: us(insertTicks), claimUs: us(claimTicks), completeUs: us(completeTicks), vacuumUs: us(vacuumTicks) };
}

async function main(): Promise<void> {
  const own = !process.argv[2] || process.argv[2] === '-' ? await startPostgresServer() : null;
  try {
    await study(own ? own.url : process.argv[2]);
  } finally {
    await own?.stop();
  }
}

async function study(url: string): Promise<void> {
  const n = Number(process.argv[3] ?? 20_000);
  const claimN = Number(process.argv[4] ?? 32);
  const batchN = Number(process.argv[5] ?? 16);
  const rounds = Number(process.argv[6] ?? 3);
  const all = variants();
  const names = (process.argv[7] ?? Object.keys(all).join(',')).split(',');
  const client = new Client({ connectionString: url });
  await client.connect();
  await client.query('SET enable_hashjoin = off');
  await client.query('SET enable_mergejoin = off');
  await client.query("SET plan_cache_mode = 'force_generic_plan'");
  const pid = (await client.query('SELECT pg_backend_pid() AS p')).rows[0].p as number;
  const results: Record<string, Result[]> = {};
  try {
    for (let r = 0; r <= rounds; r++) {
      for (const name of r % 2 ? names : [...names].reverse()) {
        const res = await runVariant(client, pid, name, all[name], r === 0 ? Math.min(n, 2000) : n, claimN, batchN, r);
        if (r === 0) continue; // warm-up
        (results[name] ??= []).push(res);
        console.log(
          `${name.padEnd(3)} round ${r}: create ${res.insertUs.toFixed(1)}  claim ${res.claimUs.toFixed(1)}  complete ${res.completeUs.toFixed(1)}  vacuum ${res.vacuumUs.toFixed(1)} µs/task`,
        );
      }
    }
    console.log(`\nmeans over ${rounds} rounds, µs of backend CPU per task (${n} tasks, claim ${claimN}, complete batches of ${batchN}):`);
    console.log('variant | create | claim | complete | claim+complete | vacuum | total');
    for (const name of names) {
      const rs = results[name];
      const m = (f: (x: Result) => number) => rs.reduce((s, x) => s + f(x), 0) / rs.length;
      console.log(
        `${name} | ${m((x) => x.insertUs).toFixed(1)} | ${m((x) => x.claimUs).toFixed(1)} | ${m((x) => x.completeUs).toFixed(1)} | ${m((x) => x.claimUs + x.completeUs).toFixed(1)} | ${m((x) => x.vacuumUs).toFixed(1)} | ${m((x) => x.insertUs + x.claimUs + x.completeUs + x.vacuumUs).toFixed(1)}`,
      );
    }
    for (const name of names) for (const t of [...all[name].tables].reverse()) await client.query(`DROP TABLE IF EXISTS ${t} CASCADE`);
  } finally {
    await client.end();
  }
}

main().then(
  () => process.exit(0),
  (e) => {
    console.error(e);
    process.exit(1);
  },
);
