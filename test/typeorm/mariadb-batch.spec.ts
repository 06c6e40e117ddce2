import { DataSource } from 'typeorm';
import { Db, writesLater } from '../../libs/priority-queue/src/stores/typeorm/db';
import { mysqlDialect } from '../../libs/priority-queue/src/stores/typeorm/dialects/mysql.dialect';
import { dataSourceOptions, openDatabase, type OpenDatabase } from './typeorm-dialects';

/**
 * MariaDB: the stores send statements in compound-statement batches (stores/typeorm/mariadb-batch.ts,
 * db.ts): a transaction's isolation level, START TRANSACTION and queue lock in one round trip,
 * its last writes (Exec.later) with its next read or its COMMIT. The transaction must really run
 * at READ COMMITTED (InnoDB's view of it), commit or roll back as a whole as before, see its own
 * queued writes, and leave the application's pooled connection as it was.
 */
describe('TypeORM MariaDB: transactions in compound-statement batches', () => {
  let db: OpenDatabase;
  let one: DataSource; // a pool of ONE connection: the application's session is the one the store used
  let store: Db;
  beforeAll(async () => {
    db = await openDatabase('mariadb');
    one = new DataSource({ ...(dataSourceOptions('mariadb', db.server) as object), extra: { connectionLimit: 1 } } as never);
    await one.initialize();
    await one.query('CREATE TABLE rc_queue (queue VARCHAR(16) PRIMARY KEY) ENGINE=InnoDB');
    await one.query("INSERT INTO rc_queue VALUES ('q')");
    await one.query('CREATE TABLE rc_rows (id INT PRIMARY KEY, v INT) ENGINE=InnoDB');
    const lock = { sql: 'SELECT CAST(ROUND(UNIX_TIMESTAMP(SYSDATE(3)) * 1000) AS SIGNED) AS now FROM rc_queue WHERE queue = ? FOR UPDATE', params: ['q'] };
    store = new Db(one, mysqlDialect, 'pq:rc-test', [1, 2], lock);
  });
  afterAll(async () => {
    await one?.destroy();
    await db?.close();
  });

  const session = async () => {
    const [r] = (await one.query('SELECT @@SESSION.tx_isolation AS iso, @@autocommit AS ac')) as Array<{ iso: string; ac: unknown }>;
    return { iso: r.iso, autocommit: Number(r.ac) };
  };
  /** InnoDB's isolation level of the open transaction of this connection (after a read of an InnoDB table). */
  const trxLevel = async (x: { rows<T>(s: string, p?: unknown[]): Promise<T[]> }) => {
    await x.rows('SELECT id FROM rc_rows WHERE id > 0 FOR UPDATE');
    const [r] = await x.rows<{ l: string }>('SELECT trx_isolation_level AS l FROM information_schema.INNODB_TRX WHERE trx_mysql_thread_id = CONNECTION_ID()');
    return r?.l;
  };

  it.each(['REPEATABLE-READ', 'SERIALIZABLE', 'READ-UNCOMMITTED'])(
    'the application\'s session at %s: the transaction runs at READ COMMITTED, commits, and the session keeps its level',
    async (level) => {
      await one.query(`SET SESSION tx_isolation = '${level}'`);
      const before = await session();
      expect(before).toEqual({ iso: level, autocommit: 1 });
      const seen = await store.tx(
        async (x) => {
          const l = await trxLevel(x);
          await x.run('INSERT INTO rc_rows (id, v) VALUES (?, 1) ON DUPLICATE KEY UPDATE v = v + 1', [level.length]);
          return l;
        },
        { queueLock: true },
      );
      expect(seen).toBe('READ COMMITTED');
      expect(await session()).toEqual(before);
      // committed: another connection sees it
      const other = (await db.dataSource.query('SELECT v FROM rc_rows WHERE id = ?', [level.length])) as Array<{ v: unknown }>;
      expect(other.map((r) => Number(r.v))).toEqual([1]);
      // and nothing is left open on the application's connection
      const [open] = (await one.query('SELECT @@in_transaction AS n')) as Array<{ n: unknown }>;
      expect(Number(open.n)).toBe(0);
    },
  );

  it('a transaction that fails is rolled back, and the session keeps its level and autocommit', async () => {
    await one.query("SET SESSION tx_isolation = 'REPEATABLE-READ'");
    await expect(
      store.tx(
        async (x) => {
          await x.run('INSERT INTO rc_rows (id, v) VALUES (100, 1)');
          throw new Error('planned failure');
        },
        { queueLock: true },
      ),
    ).rejects.toThrow('planned failure');
    expect(await session()).toEqual({ iso: 'REPEATABLE-READ', autocommit: 1 });
    expect(await db.dataSource.query('SELECT v FROM rc_rows WHERE id = 100')).toEqual([]);
    // a statement error inside (duplicate key) too
    await one.query("INSERT INTO rc_rows (id, v) VALUES (101, 1)");
    await expect(store.tx(async (x) => void (await x.run('INSERT INTO rc_rows (id, v) VALUES (102, 1), (101, 1)')), { queueLock: true })).rejects.toThrow();
    expect(await session()).toEqual({ iso: 'REPEATABLE-READ', autocommit: 1 });
    expect(await db.dataSource.query('SELECT v FROM rc_rows WHERE id = 102')).toEqual([]);
  });

  it('writes queued by later() are committed with the COMMIT, seen by the next read, and rolled back with the rest when one fails', async () => {
    const sent: string[] = [];
    const create = one.createQueryRunner.bind(one);
    one.createQueryRunner = ((...a: Parameters<DataSource['createQueryRunner']>) => {
      const qr = create(...a);
      const query = qr.query.bind(qr);
      qr.query = ((...q: Parameters<typeof qr.query>) => (sent.push(String(q[0])), query(...q))) as typeof qr.query;
      return qr;
    }) as DataSource['createQueryRunner'];
    try {
      await store.tx(
        async (x) => {
          const w = writesLater(x);
          expect(await w.run('INSERT INTO rc_rows (id, v) VALUES (300, 1)')).toBe(0); // queued: nothing sent yet
          await w.run('UPDATE rc_rows SET v = v + 1 WHERE id = 300');
          expect((await x.rows<{ v: unknown }>('SELECT v FROM rc_rows WHERE id = 300')).map((r) => Number(r.v))).toEqual([2]);
          await w.run('INSERT INTO rc_rows (id, v) VALUES (301, 7)');
        },
        { queueLock: true },
      );
      // begin + lock, the two writes with the read, the last write with the COMMIT: three round trips
      expect(sent).toHaveLength(3);
      expect(sent[2]).toMatch(/INSERT INTO rc_rows[\s\S]*COMMIT;\s*END$/);
      const rows = (await db.dataSource.query('SELECT id, v FROM rc_rows WHERE id IN (300, 301) ORDER BY id')) as Array<{ id: unknown; v: unknown }>;
      expect(rows.map((r) => [Number(r.id), Number(r.v)])).toEqual([[300, 2], [301, 7]]);
      // a queued write that fails (duplicate key) fails the COMMIT's batch: nothing of the transaction stays
      await expect(
        store.tx(
          async (x) => {
            await x.run('INSERT INTO rc_rows (id, v) VALUES (302, 1)');
            const w = writesLater(x);
            await w.run('INSERT INTO rc_rows (id, v) VALUES (303, 1)');
            await w.run('INSERT INTO rc_rows (id, v) VALUES (300, 9)');
          },
          { queueLock: true },
        ),
      ).rejects.toThrow(/Duplicate/);
      expect(await db.dataSource.query('SELECT id FROM rc_rows WHERE id IN (302, 303)')).toEqual([]);
      expect(await session()).toEqual({ iso: 'REPEATABLE-READ', autocommit: 1 });
    } finally {
      one.createQueryRunner = create;
    }
  });

  it('READ COMMITTED: a locking range read takes no gap lock, so another session inserts into the range at once', async () => {
    await one.query("SET SESSION tx_isolation = 'REPEATABLE-READ'");
    await db.dataSource.query('INSERT INTO rc_rows (id, v) VALUES (200, 0), (210, 0)');
    await store.tx(
      async (x) => {
        await x.rows('SELECT id FROM rc_rows WHERE id BETWEEN 200 AND 210 FOR UPDATE');
        // under REPEATABLE READ this INSERT would wait for the gap lock (1 s, then fail)
        const other = db.dataSource.createQueryRunner();
        try {
          await other.query('SET SESSION innodb_lock_wait_timeout = 1');
          await other.query('INSERT INTO rc_rows (id, v) VALUES (205, 0)');
        } finally {
          await other.release();
        }
      },
      { queueLock: true },
    );
  });
});
