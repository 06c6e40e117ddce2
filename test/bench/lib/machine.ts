import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { cpus, totalmem, release, platform } from 'node:os';
import { join } from 'node:path';
import { packageVersion } from './peers';

export { packageVersion };

const root = join(__dirname, '..', '..', '..');

export function ourVersion(): string {
  try {
    return JSON.parse(readFileSync(join(root, 'libs', 'priority-queue', 'package.json'), 'utf8')).version;
  } catch {
    return JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).version;
  }
}

export function gitCommit(): string {
  try {
    return execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: root, encoding: 'utf8' }).trim();
  } catch {
    return 'unknown';
  }
}

function firstLine(bin: string, args: string[]): string {
  try {
    return execFileSync(bin, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).split('\n')[0].trim();
  } catch {
    return 'unknown';
  }
}

export interface MachineFacts {
  nproc: number;
  cpuModel: string;
  memoryGiB: number;
  node: string;
  os: string;
}

export function machineFacts(): MachineFacts {
  return {
    nproc: Number(firstLine('nproc', [])) || cpus().length,
    cpuModel: cpus()[0]?.model ?? 'unknown',
    memoryGiB: Math.round((totalmem() / 2 ** 30) * 10) / 10,
    node: process.version,
    os: `${platform()} ${release()}`,
  };
}

/** Versions of the servers, asked from the binaries (cheap, no connection needed). */
export function serverVersions(): Record<string, string> {
  return {
    redis: firstLine('redis-server', ['--version']),
    postgres: firstLine('/usr/lib/postgresql/15/bin/postgres', ['--version']),
    mariadb: firstLine('mariadbd', ['--version']),
    sqlite: `better-sqlite3 ${packageVersion('better-sqlite3')}`,
  };
}
