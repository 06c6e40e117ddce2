/**
 * Which copy of a peer package the bench loads. Under `--node=24` (lib/runtime.ts) the runner
 * re-executes itself on that Node with BENCH_PEERS_ROOT set to a cached install of
 * test/bench/runtime/package.json (pg-boss 12, graphile-worker 0.18 and a better-sqlite3 built for
 * that Node). This module, loaded first by run.ts and child.ts, then sends `require` of those
 * packages there, wherever the require comes from (TypeORM's `require('better-sqlite3')`
 * included); their own dependencies resolve next to them as usual. Without BENCH_PEERS_ROOT
 * nothing changes: the repo's node_modules serve (Node 20, pg-boss 10, graphile-worker 0.17).
 */
import { existsSync, readFileSync } from 'node:fs';
import Module from 'node:module';
import { join } from 'node:path';

/** Packages taken from the runtime install when there is one. */
export const RUNTIME_PACKAGES = ['pg-boss', 'graphile-worker', 'better-sqlite3'] as const;

const repoRoot = join(__dirname, '..', '..', '..');
const peersRoot = process.env.BENCH_PEERS_ROOT || null;

function runtimePackage(request: string): string | null {
  if (!peersRoot) return null;
  for (const name of RUNTIME_PACKAGES) if (request === name || request.startsWith(name + '/')) return name;
  return null;
}

interface ResolvingModule {
  _resolveFilename(request: string, parent: unknown, isMain: boolean, options?: { paths?: string[] }): string;
}

if (peersRoot) {
  if (!existsSync(join(peersRoot, 'node_modules'))) throw new Error(`BENCH_PEERS_ROOT=${peersRoot} has no node_modules`);
  const M = Module as unknown as ResolvingModule;
  const resolve = M._resolveFilename;
  M._resolveFilename = function (request, parent, isMain, options) {
    if (runtimePackage(request)) return resolve.call(this, request, parent, isMain, { ...options, paths: [peersRoot] });
    return resolve.call(this, request, parent, isMain, options);
  };
}

/** Directory of an installed package, the runtime's copy when it has one. */
export function packageDir(name: string): string {
  if (runtimePackage(name)) return join(peersRoot!, 'node_modules', name);
  return join(repoRoot, 'node_modules', name);
}

/** Installed version of a package (read from its package.json: some block `require('x/package.json')`). */
export function packageVersion(name: string): string {
  try {
    return JSON.parse(readFileSync(join(packageDir(name), 'package.json'), 'utf8')).version;
  } catch {
    return 'unknown';
  }
}

export function majorVersion(name: string): number {
  return Number(packageVersion(name).split('.')[0]) || 0;
}
