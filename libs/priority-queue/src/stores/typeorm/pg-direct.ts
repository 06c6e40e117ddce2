import { createHash } from 'node:crypto';
import type { DataSource } from 'typeorm';
import type { Row } from './db';

interface PgPool {
  query(config: { name?: string; text: string; values?: unknown[] }): Promise<{ rows: Row[]; rowCount: number | null }>;
}

/**
 * PostgreSQL hot paths straight on the DataSource's `pg` pool (TypeORM's PostgresDriver
 * `master`), as NAMED prepared statements: parsed and planned once per pooled connection
 * instead of on every call. One statement = one round trip, in its own implicit transaction.
 */
export class PgDirect {
  private readonly names = new Map<string, string>();

  constructor(private readonly dataSource: DataSource) {}

  async rows(text: string, values: readonly unknown[]): Promise<Row[]> {
    return (await this.pool().query({ name: this.nameOf(text), text, values: values as unknown[] })).rows;
  }

  private pool(): PgPool {
    const pool = (this.dataSource.driver as unknown as { master?: PgPool }).master;
    if (!pool) throw new Error('the DataSource has no PostgreSQL pool: is it initialized?');
    return pool;
  }

  private nameOf(text: string): string {
    let n = this.names.get(text);
    if (!n) {
      n = `pq_${createHash('sha1').update(text).digest('hex').slice(0, 24)}`;
      this.names.set(text, n);
    }
    return n;
  }
}
