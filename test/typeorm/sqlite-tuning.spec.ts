import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DataSource } from 'typeorm';
import { TypeOrmTaskStore } from 'nestjs-priority-queue/typeorm';

// SQLite journal tuning by init(): WAL + synchronous=NORMAL only when the database still has the
// default rollback journal; a mode the user chose is kept; tuneSqlite: false opts out.
describe('TypeOrmTaskStore on SQLite: journal tuning', () => {
  let dir: string;
  const sources: DataSource[] = [];
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'pq-sqlite-tune-'));
  });
  afterAll(async () => {
    for (const ds of sources) await ds.destroy().catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
  });

  async function open(file: string, extra: Record<string, unknown> = {}): Promise<DataSource> {
    const ds = new DataSource({ type: 'better-sqlite3', database: join(dir, file), ...extra } as never);
    await ds.initialize();
    sources.push(ds);
    return ds;
  }
  const pragma = async (ds: DataSource, name: string) => Object.values((await ds.query(`PRAGMA ${name}`))[0] as object)[0];

  it('switches a default-journal database to WAL with synchronous = NORMAL', async () => {
    const ds = await open('default.sqlite');
    expect(String(await pragma(ds, 'journal_mode')).toLowerCase()).toBe('delete');
    await new TypeOrmTaskStore({ dataSource: ds }).init();
    expect(String(await pragma(ds, 'journal_mode')).toLowerCase()).toBe('wal');
    expect(Number(await pragma(ds, 'synchronous'))).toBe(1);
  });

  it('leaves the journal alone with tuneSqlite: false', async () => {
    const ds = await open('opt-out.sqlite');
    await new TypeOrmTaskStore({ dataSource: ds, tuneSqlite: false }).init();
    expect(String(await pragma(ds, 'journal_mode')).toLowerCase()).toBe('delete');
    expect(Number(await pragma(ds, 'synchronous'))).toBe(2);
  });

  it('keeps a journal mode the user chose, and its synchronous level', async () => {
    const ds = await open('truncate.sqlite', { prepareDatabase: (db: { pragma(s: string): unknown }) => db.pragma('journal_mode = TRUNCATE') });
    await new TypeOrmTaskStore({ dataSource: ds }).init();
    expect(String(await pragma(ds, 'journal_mode')).toLowerCase()).toBe('truncate');
    expect(Number(await pragma(ds, 'synchronous'))).toBe(2);
  });
});
