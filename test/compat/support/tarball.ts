import { renameSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { cached, evictStale, filesUnder, hashOfFiles } from './cache';
import { runOrFail } from './run';

export const REPO_ROOT = join(__dirname, '..', '..', '..');
const LIB = join(REPO_ROOT, 'libs', 'priority-queue');

/** Hash of everything the package is built from. */
function sourceHash(): string {
  const inputs = [
    ...filesUnder(join(LIB, 'src')),
    join(LIB, 'package.json'),
    join(LIB, 'README.md'),
    join(LIB, 'tsconfig.lib.json'),
    join(REPO_ROOT, 'tsconfig.json'),
    join(REPO_ROOT, 'LICENSE'),
    join(REPO_ROOT, 'scripts', 'build-lib.js'),
  ];
  return hashOfFiles(inputs, REPO_ROOT);
}

export interface PackedLibrary {
  /** The .tgz; its name carries the source hash, so an app's `file:` spec changes with the sources. */
  tarball: string;
  /** The package as packed (package.json, README.md, LICENSE, dist/). */
  packageDir: string;
  sizeBytes: number;
}

let packing: Promise<PackedLibrary> | undefined;

/**
 * Builds and packs the library as `npm publish` would (scripts/build-lib.js --out --pack), once
 * per source state: the worktree's dist/ is not touched, so parallel test files can share it.
 */
export function packLibrary(): Promise<PackedLibrary> {
  packing ??= (async () => {
    const hash = sourceHash();
    const { dir } = await cached(`tarball-${hash}`, async (tmp) => {
      const r = await runOrFail('the library', 'build and pack', process.execPath, ['scripts/build-lib.js', '--out', join(tmp, 'package'), '--pack', tmp], {
        cwd: REPO_ROOT,
      });
      const packed = r.output.trim().split('\n').pop()!.trim();
      renameSync(packed, join(tmp, `nestjs-priority-queue-${hash}.tgz`));
      rmSync(join(tmp, 'package', 'node_modules'), { recursive: true, force: true });
    });
    evictStale('tarball-', 24 * 3600_000, `tarball-${hash}`);
    const tarball = join(dir, `nestjs-priority-queue-${hash}.tgz`);
    return { tarball, packageDir: join(dir, 'package'), sizeBytes: statSync(tarball).size };
  })();
  return packing;
}
