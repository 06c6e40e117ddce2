/**
 * TypeOrmTaskStore.parallelCalls must follow the pool TypeORM really builds: TypeORM's drivers
 * take poolSize, then let `extra` (the pg / mysql2 pool options) override it, so
 * { poolSize: 1, extra: { max: 10 } } is a pool of 10 connections (calls side by side) and
 * { poolSize: 10, extra: { max: 1 } } a pool of one (one call at a time); SQLite is one call at a time.
 */
import { DataSource } from 'typeorm';
import { TypeOrmTaskStore } from 'nestjs-priority-queue/typeorm';

const store = (options: Record<string, unknown>) => new TypeOrmTaskStore({ dataSource: new DataSource(options as never), tablePrefix: 'pc_', queue: 'q' });

describe('TypeOrmTaskStore.parallelCalls reads the pool size as TypeORM does (extra over poolSize)', () => {
  it.each([
    [{ type: 'postgres', poolSize: 1, extra: { max: 10 } }, true],
    [{ type: 'postgres', poolSize: 10, extra: { max: 1 } }, false],
    [{ type: 'mariadb', poolSize: 1, extra: { connectionLimit: 10 } }, true],
    [{ type: 'mariadb', poolSize: 10, extra: { connectionLimit: 1 } }, false],
    [{ type: 'postgres' }, true],
    [{ type: 'mariadb', poolSize: 1 }, false],
    [{ type: 'postgres', extra: { connectionLimit: 1 } }, true],
    [{ type: 'better-sqlite3', database: ':memory:', poolSize: 10 }, false],
  ])('%j -> %s', (options, parallel) => {
    expect(store({ ...options, url: 'postgres://x@127.0.0.1:1/x' }).parallelCalls).toBe(parallel);
  });
});
