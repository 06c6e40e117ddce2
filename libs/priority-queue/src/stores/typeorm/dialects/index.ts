import type { DataSource } from 'typeorm';
import { Messages } from '../../../core/messages';
import type { Dialect } from './dialect';
import { mysqlDialect } from './mysql.dialect';
import { postgresDialect } from './postgres.dialect';
import { sqliteDialect } from './sqlite.dialect';

export type { Dialect, DialectKind } from './dialect';

export function dialectOf(ds: Pick<DataSource, 'options'>): Dialect {
  const type = String(ds.options.type);
  switch (type) {
    case 'postgres':
      return postgresDialect;
    case 'mysql':
    case 'mariadb':
      return mysqlDialect;
    case 'better-sqlite3':
    case 'sqlite':
      return sqliteDialect;
    default:
      throw new Error(Messages.unsupportedDriver(type));
  }
}
