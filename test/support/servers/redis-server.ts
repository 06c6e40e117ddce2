import type { ChildProcess } from 'node:child_process';
import { LOOPBACK, ensureBinary, freePort, spawnServer, stopProcess, tempDir, waitForPort } from './common';

/**
 * A throw-away redis-server (Debian package `redis-server`) on a free loopback port in a temp
 * dir. No persistence unless `appendOnly`; `restart()` keeps the port and the dir (so an AOF
 * written before the restart is replayed).
 */
export interface RedisServerHandle {
  host: string;
  port: number;
  url: string;
  dir: string;
  stop(): Promise<void>;
  /**
   * Stops the server and starts it again on the same port and dir. `downMs` keeps it down that
   * long (an outage); `whileDown` runs once it is down, before the wait.
   */
  restart(opts?: { downMs?: number; whileDown?: () => void }): Promise<void>;
}

export interface RedisServerOptions {
  /** Turns on the AOF (appendonly yes). Default off: no RDB, no AOF. */
  appendOnly?: boolean;
  /** AOF fsync policy when appendOnly; default `everysec` (Redis' default). */
  appendFsync?: 'always' | 'everysec' | 'no';
}

export function redisServerBinary(): string {
  return ensureBinary(['redis-server', '/usr/bin/redis-server'], 'redis-server');
}

export async function startRedisServer(opts: RedisServerOptions = {}): Promise<RedisServerHandle> {
  const bin = redisServerBinary();
  const port = await freePort();
  const dir = tempDir('pq-redis-');
  const args = [
    '--port', String(port),
    '--bind', LOOPBACK,
    '--dir', dir.path,
    '--save', '',
    '--appendonly', opts.appendOnly ? 'yes' : 'no',
    '--appendfsync', opts.appendFsync ?? 'everysec',
    '--daemonize', 'no',
    '--protected-mode', 'no',
    '--loglevel', 'warning',
    '--logfile', '',
  ];
  let proc: { child: ChildProcess; output: () => string } | null = null;

  const launch = async (): Promise<void> => {
    const p = spawnServer(bin, args, { cwd: dir.path });
    proc = p;
    const exited = new Promise<never>((_, reject) =>
      p.child.once('exit', (code, signal) =>
        reject(new Error(`redis-server exited early (code ${code}, signal ${signal}):\n${p.output()}`)),
      ),
    );
    exited.catch(() => undefined);
    await Promise.race([waitForPort(port, 20_000), exited]);
  };

  const halt = async (): Promise<void> => {
    const p = proc;
    proc = null;
    if (p) await stopProcess(p.child, 'SIGTERM', 10_000);
  };

  await launch();
  let stopped = false;
  return {
    host: LOOPBACK,
    port,
    url: `redis://${LOOPBACK}:${port}`,
    dir: dir.path,
    async stop() {
      if (stopped) return;
      stopped = true;
      await halt();
      dir.remove();
    },
    async restart(opts = {}) {
      if (stopped) throw new Error('redis-server was stopped');
      await halt();
      opts.whileDown?.();
      if (opts.downMs) await new Promise((r) => setTimeout(r, opts.downMs));
      await launch();
    },
  };
}
