import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer, Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * Shared plumbing of the test servers (Redis, PostgreSQL, MariaDB): free loopback ports, temp
 * dirs, waiting for a port, and installing a missing Debian package when we are root.
 */

export const LOOPBACK = '127.0.0.1';

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, LOOPBACK, () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

export function tempDir(prefix: string): { path: string; remove(): void } {
  const path = mkdtempSync(join(tmpdir(), prefix));
  return { path, remove: () => rmSync(path, { recursive: true, force: true }) };
}

export async function waitForPort(port: number, timeoutMs = 30_000, host = LOOPBACK): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const ok = await new Promise<boolean>((resolve) => {
      const s = new Socket();
      s.once('connect', () => {
        s.destroy();
        resolve(true);
      });
      s.once('error', () => {
        s.destroy();
        resolve(false);
      });
      s.connect(port, host);
    });
    if (ok) return;
    if (Date.now() > deadline) throw new Error(`server on ${host}:${port} did not open within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** First path among candidates that exists, else null. */
export function findBinary(candidates: readonly string[]): string | null {
  for (const c of candidates) {
    if (c.includes('/')) {
      if (existsSync(c)) return c;
    } else {
      try {
        const p = execFileSync('sh', ['-c', `command -v ${c}`], { encoding: 'utf8' }).trim();
        if (p) return p;
      } catch {
        /* not on PATH */
      }
    }
  }
  return null;
}

let aptUpdated = false;

/**
 * Returns the first existing binary; when none exists, installs the Debian package (root only)
 * or throws with the exact command to run.
 */
export function ensureBinary(candidates: readonly string[], aptPackage: string): string {
  const found = findBinary(candidates);
  if (found) return found;
  const cmd = `apt-get update && apt-get install -y ${aptPackage}`;
  if (typeof process.getuid !== 'function' || process.getuid() !== 0) {
    throw new Error(`${candidates[0]} is missing. Install it with: sudo sh -c '${cmd}'`);
  }
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  if (!aptUpdated) {
    execFileSync('apt-get', ['update'], { stdio: 'ignore', env });
    aptUpdated = true;
  }
  execFileSync('apt-get', ['install', '-y', '--no-install-recommends', aptPackage], { stdio: 'ignore', env });
  const after = findBinary(candidates);
  if (!after) throw new Error(`installed ${aptPackage} but found none of ${candidates.join(', ')}`);
  return after;
}

/** Spawns a server process whose output is kept for error messages. */
export function spawnServer(bin: string, args: string[], opts: { uid?: number; gid?: number; cwd?: string } = {}): {
  child: ChildProcess;
  output: () => string;
} {
  let out = '';
  const child = spawn(bin, args, { stdio: ['ignore', 'pipe', 'pipe'], ...opts });
  child.stdout?.on('data', (d) => (out = (out + d).slice(-8000)));
  child.stderr?.on('data', (d) => (out = (out + d).slice(-8000)));
  return { child, output: () => out };
}

/** Sends a signal and waits for the process to exit (SIGKILL after timeoutMs). */
export function stopProcess(child: ChildProcess, signal: NodeJS.Signals = 'SIGTERM', timeoutMs = 10_000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const t = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.once('exit', () => {
      clearTimeout(t);
      resolve();
    });
    child.kill(signal);
  });
}
