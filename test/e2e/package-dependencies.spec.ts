import { readdirSync, readFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { join } from 'node:path';

const root = join(__dirname, '..', '..');
const src = join(root, 'libs/priority-queue/src');

/** The package name of every bare import or require of the library's sources. */
function importedPackages(): Set<string> {
  const out = new Set<string>();
  const walk = (dir: string): void => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const p = join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.name.endsWith('.ts')) {
        const text = readFileSync(p, 'utf8');
        for (const m of text.matchAll(/(?:\bfrom\s+|\bimport\s*\(\s*|\brequire\s*\(\s*|^import\s+)['"]([^'"./][^'"]*)['"]/gm)) {
          const spec = m[1];
          if (spec.startsWith('node:') || builtinModules.includes(spec)) continue;
          out.add(spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : spec.split('/')[0]);
        }
      }
    }
  };
  walk(src);
  return out;
}

describe('the library package.json', () => {
  const pkg = JSON.parse(readFileSync(join(root, 'libs/priority-queue/package.json'), 'utf8')) as {
    dependencies?: Record<string, string>;
    peerDependencies?: Record<string, string>;
  };
  const declared = new Set([...Object.keys(pkg.dependencies ?? {}), ...Object.keys(pkg.peerDependencies ?? {})]);
  const imported = importedPackages();

  it('declares every package the library imports (as a dependency or a peer)', () => {
    expect([...imported].filter((p) => !declared.has(p)).sort()).toEqual([]);
  });

  it('depends on no package the library does not import (the demo and the tests have their own)', () => {
    expect(Object.keys(pkg.dependencies ?? {}).filter((p) => !imported.has(p)).sort()).toEqual([]);
    // reflect-metadata: the compiled decorators call Reflect.metadata, which the app loads (as every Nest app does)
    expect(Object.keys(pkg.peerDependencies ?? {}).filter((p) => !imported.has(p) && p !== 'reflect-metadata').sort()).toEqual([]);
  });
});
