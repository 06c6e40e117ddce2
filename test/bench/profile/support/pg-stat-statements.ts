import { Client } from 'pg';
import { startPostgresServer, type SqlServerHandle } from '../../../support/servers/postgres-server';

export interface PostgresWithStatements {
  server: SqlServerHandle;
  /** A connection of its own, to reset and read pg_stat_statements (its statements are not the profile's). */
  admin: Client;
}

/**
 * A throw-away PostgreSQL server with pg_stat_statements loaded (a preload library: the server
 * restarts once) and an admin connection. `trackAll`: the statements inside functions too (the
 * claim and complete functions' own), whose time is then also inside the calling statement's.
 */
export async function startPostgresWithStatements(opts: { trackAll: boolean }): Promise<PostgresWithStatements> {
  const server = await startPostgresServer();
  try {
    const setup = new Client({ connectionString: server.url });
    setup.on('error', () => undefined); // the restart below ends its connection
    await setup.connect();
    await setup.query(`ALTER SYSTEM SET shared_preload_libraries = 'pg_stat_statements'`);
    await setup.end();
    await server.restart();
    const admin = new Client({ connectionString: server.url });
    await admin.connect();
    await admin.query('CREATE EXTENSION IF NOT EXISTS pg_stat_statements');
    if (opts.trackAll) {
      await admin.query(`ALTER SYSTEM SET pg_stat_statements.track = 'all'`);
      await admin.query('SELECT pg_reload_conf()');
    }
    return { server, admin };
  } catch (e) {
    await server.stop();
    throw e;
  }
}
