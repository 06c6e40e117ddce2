/**
 * Dialect.nothingWritten (stores/typeorm/dialects): the rule that lets the PostgreSQL create
 * batcher send a failed shared INSERT again task by task. True only for errors after which the
 * server certainly wrote nothing of the statement; false for every error whose statement may have
 * committed (a terminated session, a killed connection, a lost reply), since sending those again
 * could write a task twice. The errors here are real ones, from real servers and drivers.
 */
import type { DataSource, QueryRunner } from 'typeorm';
import { dialectOf } from '../../libs/priority-queue/src/stores/typeorm/dialects';
import { openDatabase, type DialectName, type OpenDatabase } from './typeorm-dialects';

jest.setTimeout(120_000);

const error = (p: Promise<unknown>): Promise<unknown> => p.then(() => new Error('no error'), (e: unknown) => e);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A query runner on a connection that answers (the pool may hand back one an earlier case ended). */
async function liveRunner(ds: DataSource): Promise<QueryRunner> {
  for (let i = 0; ; i++) {
    const qr = ds.createQueryRunner();
    try {
      await qr.connect();
      await qr.query('SELECT 1');
      return qr;
    } catch (e) {
      await qr.release().catch(() => undefined);
      if (i >= 5) throw e;
    }
  }
}

async function rows(ds: DataSource, table: string): Promise<number> {
  const [r] = (await ds.query(`SELECT COUNT(*) AS n FROM ${table}`)) as Array<{ n: unknown }>;
  return Number(r.n);
}

describe.each(['postgres', 'mariadb', 'sqlite'] as const satisfies readonly DialectName[])('%s: nothingWritten', (name) => {
  let db: OpenDatabase;
  const table = `nw_${process.pid}`;
  beforeAll(async () => {
    db = await openDatabase(name);
    await db.dataSource.query(`CREATE TABLE ${table} (id INTEGER PRIMARY KEY, v INTEGER NOT NULL CHECK (v >= 0))`);
  }, 120_000);
  afterAll(() => db?.close());

  it('is true for statements the server refused, and then not one of their rows is there', async () => {
    const ds = db.dataSource;
    const d = dialectOf(ds);
    const before = await rows(ds, table);
    await ds.query(`INSERT INTO ${table} (id, v) VALUES (1, 1)`);
    const refused = [
      await error(ds.query(`INSERT INTO ${table} (id, v) VALUES (2, 2), (1, 3)`)), // a unique violation on the second row
      await error(ds.query(`INSERT INTO ${table} (id, v) VALUES (3, 3), (4, -1)`)), // a CHECK on the second row
      await error(ds.query(`INSERT INTO ${table} (id, v) VALUES (5, NULL)`)), // NOT NULL
      await error(ds.query(`INSERT INTO ${table} (id, v) VALUES (6, 6`)), // a syntax error
    ];
    expect(refused.map((e) => d.nothingWritten(e))).toEqual([true, true, true, true]);
    expect(await rows(ds, table)).toBe(before + 1); // only the first INSERT's row
    expect(d.nothingWritten(new Error('not a driver error'))).toBe(false);
    expect(d.nothingWritten(null)).toBe(false);
  });

  if (name === 'sqlite') return; // in process: no session to end from outside

  it('is false when the session was ended by the server while the statement ran', async () => {
    const ds = db.dataSource;
    const d = dialectOf(ds);
    const qr = ds.createQueryRunner();
    await qr.connect();
    try {
      const idSql = name === 'postgres' ? 'SELECT pg_backend_pid() AS id' : 'SELECT CONNECTION_ID() AS id';
      const [{ id }] = (await qr.query(idSql)) as Array<{ id: unknown }>;
      const running = error(qr.query(name === 'postgres' ? 'SELECT pg_sleep(20)' : 'SELECT SLEEP(20)'));
      await sleep(300);
      await ds.query(name === 'postgres' ? `SELECT pg_terminate_backend(${Number(id)})` : `KILL ${Number(id)}`);
      expect(d.nothingWritten(await running)).toBe(false);
    } finally {
      await qr.release().catch(() => undefined);
    }
  });

  it('is false when the statement was cut off by the server (a cancel or KILL QUERY) or its connection dropped on our side', async () => {
    const ds = db.dataSource;
    const d = dialectOf(ds);
    const qr = await liveRunner(ds);
    try {
      const idSql = name === 'postgres' ? 'SELECT pg_backend_pid() AS id' : 'SELECT CONNECTION_ID() AS id';
      const [{ id }] = (await qr.query(idSql)) as Array<{ id: unknown }>;
      {
        const running = error(qr.query(name === 'postgres' ? 'SELECT pg_sleep(20)' : 'SELECT SLEEP(20)'));
        await sleep(300);
        await ds.query(name === 'postgres' ? `SELECT pg_cancel_backend(${Number(id)})` : `KILL QUERY ${Number(id)}`);
        const e = await running;
        // MariaDB answers a killed SLEEP with 1 (no error) on some versions: then there is nothing to judge
        if (name === 'postgres' || !(e instanceof Error && e.message === 'no error')) expect(d.nothingWritten(e)).toBe(false);
      }
      // the client's socket goes away under a running statement
      const running = error(qr.query(name === 'postgres' ? 'SELECT pg_sleep(20)' : 'SELECT SLEEP(20)'));
      await sleep(300);
      const conn = (qr as unknown as { databaseConnection: { stream?: { destroy(): void }; connection?: { stream?: { destroy(): void } } } }).databaseConnection;
      (conn.stream ?? conn.connection?.stream)!.destroy();
      expect(d.nothingWritten(await running)).toBe(false);
    } finally {
      await qr.release().catch(() => undefined);
    }
  });
});
