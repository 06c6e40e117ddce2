import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { withLock } from '../../support/node-builds';
import { cached, CACHE_ROOT } from './cache';
import type { Runtime } from './node-runtime';
import { runOrFail } from './run';
import { REPO_ROOT } from './tarball';

/**
 * better-sqlite3 prebuilt once per version and Node.js ABI, for the apps' plain `npm install`.
 *
 * Its install script is `prebuild-install || node-gyp rebuild`: the download of the prebuilt
 * binary from GitHub is blocked here (and on CI), so every app install compiled the SQLite
 * amalgamation again (~4 minutes each on a loaded machine). prebuild-install first looks for
 * `<local-prebuilds>/better-sqlite3-v<version>-node-v<abi>-<platform>-<arch>.tar.gz` (the same
 * archive it would download); an app gets a `.prebuild-installrc` pointing there, so its install
 * runs every script as a user's would and unpacks the binary instead of compiling it.
 * prebuild-install then loads the binary under the installing Node.js, and falls back to
 * compiling when that fails, so a wrong binary cannot slip through.
 *
 * The archive: under the system Node.js, the workspace's own better-sqlite3 binary when it is
 * the same version (built by the workspace's install already); else compiled once into the cache
 * with node-gyp on every core, at -O0 (UNOPTIMISED below). Most of that compile is the SQLite
 * amalgamation, which includes no Node.js header: under ccache (support/node-runtime.ts) the
 * second ABI's build takes its object from the first (measured at -O3: 4 min 42 s for the first
 * ABI, 30 s for the next). Two builds at once
 * would both miss, so builds for different ABIs take turns (one lock file in the cache), and the
 * slow-first sequencer (test/support/slow-first-sequencer.js) starts only one of the Node.js
 * lines that compile at the beginning of a run.
 */
const PACKAGE = 'better-sqlite3';

/**
 * The binary only serves the apps' smoke steps (a few tasks each), so it is compiled without
 * optimisation: gyp's Makefile puts the environment's CFLAGS after its own `-O3`, and gcc obeys
 * the last `-O`. The SQLite amalgamation takes 7 s at -O0 against 48 s at -O3 on an idle core of
 * this machine (83 s inside a loaded CI run, where it was the Node 24 matrix's first test).
 */
const UNOPTIMISED = { CFLAGS: '-O0', CXXFLAGS: '-O0' };

export interface Prebuilds {
  /** The directory holding the archive(s), for `local-prebuilds`. */
  dir: string;
  /** Whether the archive came from the cache. */
  hit: boolean;
}

function archiveName(version: string, abi: string): string {
  return `${PACKAGE}-v${version}-node-v${abi}-${process.platform}-${process.arch}.tar.gz`;
}

function workspaceBinary(version: string): string | null {
  const pkgDir = join(REPO_ROOT, 'node_modules', PACKAGE);
  const binary = join(pkgDir, 'build', 'Release', 'better_sqlite3.node');
  if (!existsSync(binary)) return null;
  const pkg = JSON.parse(readFileSync(join(pkgDir, 'package.json'), 'utf8')) as { version: string };
  return pkg.version === version ? binary : null;
}

/** The archive of better-sqlite3 `version` for `runtime`, built on first use. */
export async function sqlitePrebuilds(runtime: Runtime, version: string): Promise<Prebuilds> {
  const abi = execFileSync(runtime.node, ['-p', 'process.versions.modules'], { encoding: 'utf8' }).trim();
  const what = `[${PACKAGE} ${version} prebuilt for ABI ${abi}] on ${runtime.label}`;
  const fromWorkspace = runtime.node === process.execPath ? workspaceBinary(version) : null;
  return cached(`prebuild-${PACKAGE}-${version}-abi${abi}-${process.platform}-${process.arch}`, async (tmp) => {
    let binary = fromWorkspace;
    if (!binary) {
      const build = join(tmp, 'build-tree');
      mkdirSync(build);
      writeFileSync(join(build, 'package.json'), '{"private":true}\n');
      // the sources only; the compile follows on every core (node-gyp --jobs=max)
      await runOrFail(what, 'npm install --ignore-scripts', runtime.npm[0], [runtime.npm[1], 'install', '--ignore-scripts', `${PACKAGE}@${version}`], {
        cwd: build,
        env: runtime.env,
        timeoutMs: 10 * 60_000,
      });
      const nodeGyp = join(dirname(runtime.npm[1]), '..', 'node_modules', 'node-gyp', 'bin', 'node-gyp.js');
      const pkgDir = join(build, 'node_modules', PACKAGE);
      await withLock(join(CACHE_ROOT, 'native-compile.lock'), () =>
        runOrFail(what, 'node-gyp rebuild', runtime.node, [nodeGyp, 'rebuild', '--release', '--jobs=max'], {
          cwd: pkgDir,
          env: { ...runtime.env, ...UNOPTIMISED },
          timeoutMs: 15 * 60_000,
        }),
      );
      binary = join(pkgDir, 'build', 'Release', 'better_sqlite3.node');
    }
    // the archive holds build/Release/better_sqlite3.node, as the released ones do
    const stage = join(tmp, 'stage');
    mkdirSync(join(stage, 'build', 'Release'), { recursive: true });
    await runOrFail(what, 'copy of the binary', 'cp', [binary, join(stage, 'build', 'Release', 'better_sqlite3.node')], { cwd: tmp });
    await runOrFail(what, 'tar', 'tar', ['-czf', join(tmp, archiveName(version, abi)), '-C', stage, 'build/Release/better_sqlite3.node'], { cwd: tmp });
    await runOrFail(what, 'cleanup', 'rm', ['-rf', stage, join(tmp, 'build-tree')], { cwd: tmp });
  });
}

/** The `.prebuild-installrc` of an app: prebuild-install (rc) reads it from the app's directory up. */
export function prebuildInstallRc(prebuilds: Prebuilds): string {
  return `${JSON.stringify({ 'local-prebuilds': prebuilds.dir }, null, 2)}\n`;
}
