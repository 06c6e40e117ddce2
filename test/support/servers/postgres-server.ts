import { execFileSync, spawnSync } from 'node:child_process';
import { chownSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ensureBinary, freePort, LOOPBACK, spawnServer, stopProcess, tempDir, waitForPort } from './common';

/** A running SQL server for tests and benchmarks (PostgreSQL or MariaDB). */
export interface SqlServerHandle {
  host: string;
  port: number;
  user: string;
  password: string;
  database: string;
  url: string;
  dir: string;
  stop(): Promise<void>;
  /** Stops and starts the server again on the same port with the same data. */
  restart(): Promise<void>;
}

const PG_BIN_DIR = '/usr/lib/postgresql/15/bin';

function systemUser(name: string): { uid: number; gid: number } | null {
  try {
    const uid = Number(execFileSync('id', ['-u', name], { encoding: 'utf8' }).trim());
    const gid = Number(execFileSync('id', ['-g', name], { encoding: 'utf8' }).trim());
    return { uid, gid };
  } catch {
    return null;
  }
}

/**
 * A throw-away PostgreSQL 15 server: data dir and unix socket in a temp dir, 127.0.0.1 on a free
 * port, durability off for speed. initdb refuses root, so when we are root the server runs as
 * the `postgres` system user (created by the Debian package).
 */
export async function startPostgresServer(): Promise<SqlServerHandle> {
  const postgres = ensureBinary([join(PG_BIN_DIR, 'postgres'), 'postgres'], 'postgresql');
  const binDir = postgres.slice(0, postgres.lastIndexOf('/'));
  const initdb = join(binDir, 'initdb');
  const dir = tempDir('pq-postgres-');
  const data = join(dir.path, 'data');
  const sock = join(dir.path, 'sock');
  mkdirSync(sock);
  const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;
  const owner = isRoot ? systemUser('postgres') : null;
  if (isRoot && !owner) throw new Error('running as root but the `postgres` system user does not exist');
  if (owner) {
    chownSync(dir.path, owner.uid, owner.gid);
    chownSync(sock, owner.uid, owner.gid);
  }
  const user = 'postgres';
  const password = 'postgres';
  const database = 'postgres';
  const pwFile = join(dir.path, 'pw');
  writeFileSync(pwFile, password + '\n');
  if (owner) chownSync(pwFile, owner.uid, owner.gid);
  execFileSync(
    initdb,
    ['-D', data, '-U', user, '--pwfile', pwFile, '--auth=scram-sha-256', '--auth-local=trust', '-E', 'UTF8', '--locale=C', '--no-sync'],
    { stdio: 'pipe', ...(owner ?? {}) },
  );
  const port = await freePort();
  const args = [
    '-D', data,
    '-k', sock,
    '-h', LOOPBACK,
    '-p', String(port),
    '-c', 'fsync=off',
    '-c', 'synchronous_commit=off',
    '-c', 'full_page_writes=off',
    '-c', 'max_connections=300',
    '-c', 'shared_buffers=256MB',
    '-c', 'log_min_messages=warning',
  ];
  let server = spawnServer(postgres, args, owner ?? {});
  const pgIsReady = join(binDir, 'pg_isready');
  const boot = async () => {
    try {
      await waitForPort(port, 60_000);
      // The port opens while the server is still "starting up" (recovery after a restart):
      // wait until it accepts connections.
      const deadline = Date.now() + 60_000;
      while (spawnSync(pgIsReady, ['-q', '-h', LOOPBACK, '-p', String(port), '-U', user]).status !== 0) {
        if (Date.now() > deadline) throw new Error(`PostgreSQL on port ${port} did not accept connections within 60 s`);
        await new Promise((r) => setTimeout(r, 50));
      }
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
    url: `postgres://${user}:${password}@${LOOPBACK}:${port}/${database}`,
    dir: dir.path,
    async stop() {
      // SIGINT = fast shutdown (disconnects clients); SIGTERM would wait for them.
      await stopProcess(server.child, 'SIGINT', 20_000);
      dir.remove();
    },
    async restart() {
      await stopProcess(server.child, 'SIGINT', 20_000);
      server = spawnServer(postgres, args, owner ?? {});
      await boot();
    },
  };
}
