import { randomUUID } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { MigrationInterface } from 'typeorm';
import { ConfigurationError, ManualClock, TaskStatus, fenceOf, type NewTask } from '../../libs/priority-queue/src/core';
import { priorityQueueMigrations, TypeOrmTaskStore } from 'nestjs-priority-queue/typeorm';
import { tableNames } from '../../libs/priority-queue/src/stores/typeorm/names';
import { LATEST_SCHEMA_VERSION, migrationStatements, SCHEMA_MIGRATIONS } from '../../libs/priority-queue/src/stores/typeorm/schema/migrations';
import { PG_TASK_RESULT } from '../../libs/priority-queue/src/stores/typeorm/schema/pg-functions';
import { sqlStatements } from '../../libs/priority-queue/src/stores/typeorm/schema/sql-files';
import { openDatabase, type DialectName, type OpenDatabase } from './typeorm-dialects';
import { runMigrations } from './run-migrations';
import { schemaCatalog, type SchemaCatalog } from './schema-catalog';

// Real PostgreSQL and MariaDB servers and a SQLite file; never skipped.
jest.setTimeout(180_000);

const SCHEMA_DIR = join(__dirname, '..', '..', 'libs', 'priority-queue', 'src', 'stores', 'typeorm', 'schema');
const KINDS = ['postgres', 'mysql', 'sqlite'] as const;
const T0 = 1_700_000_000_000;

/**
 * What the one migration creates per dialect (the lists of docs/TYPEORM.md, "Schema and
 * migrations"): tables, PostgreSQL functions, triggers, with the prefix as `<p>`.
 */
const EXPECTED: Record<DialectName, { tables: string[]; functions: string[]; triggers: string[] }> = {
  postgres: {
    tables: ['fair_levels', 'fair_tags', 'lane_marks', 'lanes', 'queues', 'releases', 'resources', 'schema_version', 'sweeps', 'tasks', 'tenant_weights'],
    functions: ['claim', 'claim_polls', 'complete_and_claim', 'complete_leased', 'fair_tag', 'next_finish_tag', 'task_history'],
    triggers: ['tasks_history'],
  },
  mariadb: {
    tables: ['fair_levels', 'fair_tags', 'lanes', 'queues', 'releases', 'resources', 'schema_version', 'stage_marks', 'sweeps', 'tasks', 'tenant_weights'],
    functions: [],
    triggers: ['tasks_history'],
  },
  sqlite: {
    tables: ['fair_levels', 'fair_tags', 'lanes', 'queues', 'releases', 'resources', 'schema_version', 'sweeps', 'tasks', 'tenant_weights'],
    functions: [],
    triggers: ['tasks_history'],
  },
};

describe('TypeORM schema files', () => {
  const files = (kind: string) => readdirSync(join(SCHEMA_DIR, kind)).filter((f) => f.endsWith('.sql'));

  it.each(KINDS)('%s: every migration file exists, every file is used, and each parses into statements with only {{prefix}} in them', (kind) => {
    const used = new Set(['schema-version.sql']);
    for (const m of SCHEMA_MIGRATIONS) for (const f of [...m.up[kind], ...m.down[kind]]) used.add(f);
    expect(files(kind).sort()).toEqual([...used].sort());
    const t = tableNames('zz_');
    for (const f of files(kind)) {
      const statements = sqlStatements(readFileSync(join(SCHEMA_DIR, kind, f), 'utf8'), t, f);
      expect(statements.length).toBeGreaterThan(0);
      for (const s of statements) {
        expect(s).not.toMatch(/\{\{|\}\}/);
        // a PL/pgSQL body is never cut: its dollar quotes open and close in the same statement
        expect((s.match(/\$fn\$/g) ?? []).length % 2).toBe(0);
        // every object is under the prefix
        for (const [, name] of s.matchAll(/\b(?:TABLE|INDEX|FUNCTION|TRIGGER)(?: IF (?:NOT )?EXISTS)? ([a-z_]+)/g)) expect(name.startsWith('zz_')).toBe(true);
      }
    }
  });

  it('each PostgreSQL function and each trigger has a header naming what it mirrors in core and how it locks', () => {
    for (const kind of KINDS) {
      for (const f of files(kind)) {
        const text = readFileSync(join(SCHEMA_DIR, kind, f), 'utf8');
        if (!/^CREATE (OR REPLACE FUNCTION|TRIGGER)/m.test(text)) continue;
        const header = text.slice(0, text.search(/^CREATE/m));
        expect({ file: `${kind}/${f}`, mirrors: /Mirrors/.test(header), locks: /Locks:/.test(header) }).toEqual({ file: `${kind}/${f}`, mirrors: true, locks: true });
      }
    }
  });

  it('rejects a statement that does not end in column 1', () => {
    expect(() => sqlStatements('CREATE TABLE {{prefix}}x (a int)\n  ;\n', tableNames('zz_'), 'x.sql')).toThrow(/x\.sql/);
    expect(() => sqlStatements('SELECT {{table}};\n', tableNames('zz_'), 'y.sql')).toThrow(/unknown placeholder/);
  });
});

describe.each(['postgres', 'mariadb', 'sqlite'] as DialectName[])('TypeORM store on %s: the one schema migration', (dialect) => {
  let db: OpenDatabase;
  const p = dialect.slice(0, 2);
  const clock = new ManualClock(T0);

  beforeAll(async () => {
    db = await openDatabase(dialect);
  });
  afterAll(async () => {
    await db?.close();
  });

  /** up in order, down newest first. */
  function run(classes: Array<new () => MigrationInterface>, direction: 'up' | 'down'): Promise<void> {
    return runMigrations(db.dataSource, direction === 'up' ? classes : [...classes].reverse(), direction);
  }

  async function statements(prefix: string): Promise<void> {
    const kind = dialect === 'mariadb' ? 'mysql' : dialect;
    for (const m of SCHEMA_MIGRATIONS) for (const s of migrationStatements(m, kind, tableNames(prefix))) await db.dataSource.query(s);
  }

  function newTask(priority: number): NewTask {
    return { id: randomUUID(), idempotencyKey: null, type: 't', payload: { priority }, priority, providerKey: 'p', accountId: `a${priority % 3}`, tenantId: null, concurrencyKey: null, delayMs: 0, timeoutMs: null, maxAttempts: 3, idempotent: true };
  }

  /** A store on the prefix does its work: create, claim in order, complete, history. */
  async function exercise(store: TypeOrmTaskStore): Promise<void> {
    const tasks = [1, 5, 3, 9, 7].map(newTask);
    await store.create(tasks);
    const claim = await store.claimSubmissions({ owner: 'w', limit: 10, leaseMs: 30_000 });
    expect(claim.claimed.map((t) => t.priority)).toEqual([9, 7, 5, 3, 1]);
    for (const t of claim.claimed) await store.complete(fenceOf(t), { status: TaskStatus.SUCCEEDED, result: { ok: t.id } });
    const h = await store.history(tasks[0].id);
    expect(h.map((e) => e.to)).toEqual([TaskStatus.PENDING_SUBMIT, TaskStatus.SUBMITTING, TaskStatus.SUCCEEDED]);
  }

  const names = (catalog: SchemaCatalog, rec: keyof SchemaCatalog) => Object.keys(catalog[rec]).map((n) => n.replace(/^<p>/, '')).sort();

  it('init() and priorityQueueMigrations() create the same objects, the documented ones, and both stores work', async () => {
    const a = `${p}a_`;
    const b = `${p}b_`;
    const byInit = new TypeOrmTaskStore({ dataSource: db.dataSource, tablePrefix: a, queue: 'q', clock, historyLimit: 5 });
    await byInit.init();
    await run(priorityQueueMigrations({ tablePrefix: b }), 'up');
    const byMigrations = new TypeOrmTaskStore({ dataSource: db.dataSource, tablePrefix: b, queue: 'q', migrate: false, clock, historyLimit: 5 });
    await byMigrations.init();

    const ca = await schemaCatalog(db.dataSource, a);
    expect(await schemaCatalog(db.dataSource, b)).toEqual(ca);
    expect(names(ca, 'tables')).toEqual(EXPECTED[dialect].tables);
    expect(names(ca, 'functions')).toEqual(EXPECTED[dialect].functions);
    expect(names(ca, 'triggers')).toEqual(EXPECTED[dialect].triggers);
    const rows = await db.dataSource.query(`SELECT version, name FROM ${b}schema_version`);
    expect(rows.map((r: { version: unknown }) => Number(r.version))).toEqual([LATEST_SCHEMA_VERSION]);

    await exercise(byInit);
    await exercise(byMigrations);
    await byInit.close();
    await byMigrations.close();
  });

  it('migrate: false on a prefix without the schema: init() refuses and says what to run', async () => {
    const prefix = `${p}none_`;
    const store = new TypeOrmTaskStore({ dataSource: db.dataSource, tablePrefix: prefix, queue: 'q', migrate: false });
    const err = await store.init().then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ConfigurationError);
    expect(String((err as Error).message)).toContain(`priorityQueueMigrations({ tablePrefix: '${prefix}' })`);
    // and it created nothing
    expect(await schemaCatalog(db.dataSource, prefix)).toEqual({ tables: {}, indexes: {}, functions: {}, triggers: {} });
  });

  it('the statements run again over a live queue change nothing (a migration cut in the middle is run again from its start)', async () => {
    const prefix = `${p}again_`;
    await run(priorityQueueMigrations({ tablePrefix: prefix }), 'up');
    const store = new TypeOrmTaskStore({ dataSource: db.dataSource, tablePrefix: prefix, queue: 'q', migrate: false, clock, historyLimit: 5 });
    await store.init();
    const pending = [2, 4, 6].map(newTask);
    await store.create(pending);
    const before = await schemaCatalog(db.dataSource, prefix);
    await statements(prefix);
    await statements(prefix);
    expect(await schemaCatalog(db.dataSource, prefix)).toEqual(before);
    // the tasks are still there and still claimed in order, with their history
    const claim = await store.claimSubmissions({ owner: 'w', limit: 10, leaseMs: 30_000 });
    expect(claim.claimed.map((t) => t.id)).toEqual([pending[2].id, pending[1].id, pending[0].id]);
    expect((await store.history(pending[0].id)).map((e) => e.to)).toEqual([TaskStatus.PENDING_SUBMIT, TaskStatus.SUBMITTING]);
    await store.close();
  });

  it('many stores starting together on a fresh prefix: one applies the migration, all start', async () => {
    const prefix = `${p}race_`;
    const stores = Array.from({ length: 8 }, (_, i) => new TypeOrmTaskStore({ dataSource: db.dataSource, tablePrefix: prefix, queue: `q${i % 3}`, clock }));
    await Promise.all(stores.map((s) => s.init()));
    const rows = await db.dataSource.query(`SELECT version FROM ${prefix}schema_version`);
    expect(rows.map((r: { version: unknown }) => Number(r.version))).toEqual([LATEST_SCHEMA_VERSION]);
    await Promise.all(stores.map((s) => s.close()));
  });

  it('down removes every object of its prefix and nothing of another prefix; up again gives the same schema', async () => {
    const keep = `${p}keep_`;
    const gone = `${p}gone_`;
    await run(priorityQueueMigrations({ tablePrefix: keep }), 'up');
    const migrations = priorityQueueMigrations({ tablePrefix: gone });
    await run(migrations, 'up');
    const store = new TypeOrmTaskStore({ dataSource: db.dataSource, tablePrefix: gone, queue: 'q', migrate: false, clock });
    await store.init();
    await store.create([newTask(1)]);
    await store.close();
    const kept = await schemaCatalog(db.dataSource, keep);
    const full = await schemaCatalog(db.dataSource, gone);

    await run(migrations, 'down');
    expect(await schemaCatalog(db.dataSource, gone)).toEqual({ tables: {}, indexes: {}, functions: {}, triggers: {} });
    expect(await schemaCatalog(db.dataSource, keep)).toEqual(kept);
    await run(migrations, 'up');
    expect(await schemaCatalog(db.dataSource, gone)).toEqual(full);
  });

  if (dialect === 'postgres') {
    it('the claim, complete_leased and complete_and_claim functions return the task columns the store reads (PG_TASK_RESULT)', async () => {
      const prefix = `${p}fn_`;
      await run(priorityQueueMigrations({ tablePrefix: prefix }), 'up');
      const result = async (fn: string) => {
        const [r] = await db.dataSource.query(`SELECT pg_get_function_result(oid) AS r FROM pg_proc WHERE proname = $1`, [`${prefix}${fn}`]);
        return String(r.r);
      };
      const tail = PG_TASK_RESULT.map(([n, type]) => `o_${n} ${type === 'varchar' ? 'character varying' : type}`).join(', ');
      expect(await result('claim')).toBe(`TABLE(o_kind smallint, o_wake bigint, o_ctid tid, ${tail})`);
      expect(await result('complete_leased')).toBe(`TABLE(o_kind smallint, ${tail})`);
      expect(await result('complete_and_claim')).toBe(`TABLE(o_part smallint, o_kind smallint, o_wake bigint, o_ctid tid, ${tail})`);
    });
  }
});
