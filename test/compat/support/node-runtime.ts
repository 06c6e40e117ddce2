import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { cleanNpmEnv, nodeBuild, npmCli } from '../../support/node-builds';
import { ensureBinary, findBinary } from '../../support/servers/common';
import type { NodeRuntime } from '../matrix';
import { CACHE_ROOT } from './cache';

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

let compilerCache: NodeJS.ProcessEnv | undefined;

/**
 * better-sqlite3 is compiled at most once per Node.js ABI and cache (support/native-prebuilds.ts;
 * the system Node.js reuses the workspace's binary). With ccache (Debian package `ccache`,
 * installed when running as root) a compile after the cache was wiped is a cache hit; without
 * it the compile still works, only slower. A source build the apps fall back to uses it too.
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

/**
 * npm settings of every install of the compatibility tests. prefer-offline: a package document
 * already in npm's cache is used as it is instead of being fetched again (a cold app install
 * revalidated ~270 of them, some megabytes each, and each app under each Node.js did it again
 * for the same pins); what is not cached yet is still downloaded. The installs stay as fresh as
 * before: a pinned app's install is cached whole (support/cache.ts) after its first run anyway.
 */
const QUIET_NPM = {
  npm_config_fund: 'false',
  npm_config_audit: 'false',
  npm_config_update_notifier: 'false',
  npm_config_loglevel: 'warn',
  npm_config_prefer_offline: 'true',
};

/**
 * The runtime: the system Node.js, or the official Linux x64 build of `version` from the npm
 * registry (test/support/node-builds.ts), installed once into the cache. npm runs without the
 * settings `npm test` exported, so the apps install as a user's would.
 */
export async function nodeRuntime(r: NodeRuntime): Promise<Runtime> {
  if (r.version === 'system') {
    return {
      label: `Node.js ${process.versions.node}`,
      version: process.versions.node,
      node: process.execPath,
      env: cleanNpmEnv({ ...compilerCacheEnv(), ...QUIET_NPM }),
      npm: [process.execPath, npmCli()],
    };
  }
  const build = nodeBuild(r.version, CACHE_ROOT);
  const version = execFileSync(build.node, ['-p', 'process.versions.node'], { encoding: 'utf8' }).trim();
  if (version !== r.version) throw new Error(`${build.node} is Node.js ${version}, expected ${r.version}`);
  return { label: `Node.js ${version}`, version, node: build.node, env: build.env({ ...compilerCacheEnv(), ...QUIET_NPM }), npm: [build.node, npmCli()] };
}
