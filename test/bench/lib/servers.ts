import { startRedisServer } from '../../support/servers/redis-server';
import { startPostgresServer } from '../../support/servers/postgres-server';
import { startMariaDbServer } from '../../support/servers/mariadb-server';
import { tempDir } from '../../support/servers/common';
import type { BenchEnv, ServerKind } from '../target';

/** Starts the servers the chosen targets need, with the test harness (loopback, temp dirs). */
export async function startServers(kinds: ReadonlySet<ServerKind>, log: (m: string) => void): Promise<{ env: BenchEnv; stop(): Promise<void> }> {
  const env: BenchEnv = {};
  const stops: Array<() => Promise<void> | void> = [];
  const stop = async () => {
    for (const s of stops.reverse()) await Promise.resolve(s()).catch(() => undefined);
  };
  try {
    if (kinds.has('redis')) {
      const r = await startRedisServer();
      stops.push(() => r.stop());
      env.redis = { host: r.host, port: r.port, url: r.url };
      log(`redis-server on ${r.url}`);
    }
    if (kinds.has('postgres')) {
      const p = await startPostgresServer();
      stops.push(() => p.stop());
      env.postgres = { host: p.host, port: p.port, user: p.user, password: p.password, database: p.database, url: p.url };
      log(`postgres on ${p.host}:${p.port}`);
    }
    if (kinds.has('mariadb')) {
      const m = await startMariaDbServer();
      stops.push(() => m.stop());
      env.mariadb = { host: m.host, port: m.port, user: m.user, password: m.password, database: m.database, url: m.url };
      log(`mariadb on ${m.host}:${m.port}`);
    }
    if (kinds.has('sqlite')) {
      const d = tempDir('pq-bench-sqlite-');
      stops.push(() => d.remove());
      env.sqliteDir = d.path;
    }
  } catch (e) {
    await stop();
    throw e;
  }
  return { env, stop };
}
