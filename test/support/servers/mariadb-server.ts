import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ensureBinary, findBinary, freePort, LOOPBACK, spawnServer, stopProcess, tempDir, waitForPort } from './common';
import type { SqlServerHandle } from './postgres-server';

export type { SqlServerHandle } from './postgres-server';

/**
 * A throw-away MariaDB server for tests and benchmarks: data dir and socket in a temp dir,
 * 127.0.0.1 on a free port, durability turned off for speed. Installs `mariadb-server` with apt
 * when missing (root only). An init file creates the database and a password user on every start.
 */
export async function startMariaDbServer(): Promise<SqlServerHandle> {
  const mariadbd = ensureBinary(['mariadbd', '/usr/sbin/mariadbd', 'mysqld', '/usr/sbin/mysqld'], 'mariadb-server');
  const installDb = findBinary(['mariadb-install-db', '/usr/bin/mariadb-install-db', 'mysql_install_db', '/usr/bin/mysql_install_db']);
  if (!installDb) throw new Error('mariadb-install-db not found next to ' + mariadbd);
  const dir = tempDir('pq-mariadb-');
  const data = join(dir.path, 'data');
  const socket = join(dir.path, 'mysqld.sock');
  // a private tmpdir: parallel bootstraps sharing /tmp clashed on their temp tables
  // ("Unknown table 'mysql.tmp_proxies_priv'")
  const tmp = join(dir.path, 'tmp');
  mkdirSync(tmp);
  const user = 'pq';
  const password = 'pq';
  const database = 'pq';
  execFileSync(installDb, [
    '--no-defaults',
    `--datadir=${data}`,
    `--tmpdir=${tmp}`,
    '--user=root',
    '--auth-root-authentication-method=normal',
    '--skip-test-db',
    '--skip-name-resolve',
  ], { stdio: 'pipe' });
  const initFile = join(dir.path, 'init.sql');
  writeFileSync(
    initFile,
    [
      `CREATE DATABASE IF NOT EXISTS \`${database}\`;`,
      `CREATE USER IF NOT EXISTS '${user}'@'%' IDENTIFIED BY '${password}';`,
      `CREATE USER IF NOT EXISTS '${user}'@'127.0.0.1' IDENTIFIED BY '${password}';`,
      `GRANT ALL PRIVILEGES ON *.* TO '${user}'@'%';`,
      `GRANT ALL PRIVILEGES ON *.* TO '${user}'@'127.0.0.1';`,
      '',
    ].join('\n'),
  );
  const port = await freePort();
  const args = [
    '--no-defaults',
    `--datadir=${data}`,
    `--socket=${socket}`,
    `--tmpdir=${tmp}`,
    `--pid-file=${join(dir.path, 'mysqld.pid')}`,
    `--port=${port}`,
    `--bind-address=${LOOPBACK}`,
    '--user=root',
    `--init-file=${initFile}`,
    '--skip-name-resolve',
    '--skip-log-bin',
    '--innodb-flush-log-at-trx-commit=0',
    '--innodb-doublewrite=0',
    '--innodb-buffer-pool-size=256M',
    '--innodb-log-file-size=128M',
    '--max-connections=400',
    '--character-set-server=utf8mb4',
    '--collation-server=utf8mb4_bin',
    '--log-error=' + join(dir.path, 'error.log'),
  ];
  let server = spawnServer(mariadbd, args);
  const boot = async () => {
    try {
      await waitForPort(port, 60_000);
    } catch (e) {
      throw new Error(`${(e as Error).message}\n${server.output()}`);
    }
  };
  await boot();
  return {
    host: LOOPBACK,
    port,
    user,
    password,
    database,
    url: `mysql://${user}:${password}@${LOOPBACK}:${port}/${database}`,
    dir: dir.path,
    async stop() {
      await stopProcess(server.child, 'SIGTERM', 20_000);
      dir.remove();
    },
    async restart() {
      await stopProcess(server.child, 'SIGTERM', 20_000);
      server = spawnServer(mariadbd, args);
      await boot();
    },
  };
}
