#!/usr/bin/env node
// Builds the publishable package libs/priority-queue: TypeScript to dist/ (no source maps: the
// package ships no sources), the non-TS assets (Lua scripts of the Redis store, the dashboard's
// page, script and stylesheet) and the repository's LICENSE. The package README is
// libs/priority-queue/README.md itself.
//
//   node scripts/build-lib.js              builds in place (libs/priority-queue/dist)
//   node scripts/build-lib.js --out DIR    assembles the package in DIR instead (package.json,
//                                          README.md, LICENSE, dist/): the worktree is not touched
//   ... --pack DIR                         then `npm pack`s it into DIR and prints the tarball's path
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const root = path.join(__dirname, '..');
const lib = path.join(root, 'libs', 'priority-queue');

function option(name) {
  const at = process.argv.indexOf(name);
  return at === -1 ? undefined : path.resolve(process.argv[at + 1] ?? '.');
}

const out = option('--out') ?? lib;
const dist = path.join(out, 'dist');
fs.rmSync(dist, { recursive: true, force: true });
execFileSync(process.execPath, [require.resolve('typescript/bin/tsc'), '-p', path.join(lib, 'tsconfig.lib.json'), '--outDir', dist], {
  stdio: 'inherit',
});

function copyAssets(dir) {
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const from = path.join(dir, entry.name);
    if (entry.isDirectory()) copyAssets(from);
    else if (entry.name.endsWith('.lua') || entry.name.endsWith('.sql') || path.basename(dir) === 'assets') {
      const to = path.join(dist, path.relative(path.join(lib, 'src'), from));
      fs.mkdirSync(path.dirname(to), { recursive: true });
      fs.copyFileSync(from, to);
    }
  }
}
copyAssets(path.join(lib, 'src'));
fs.copyFileSync(path.join(root, 'LICENSE'), path.join(out, 'LICENSE'));
if (out !== lib) {
  for (const f of ['package.json', 'README.md']) fs.copyFileSync(path.join(lib, f), path.join(out, f));
}
console.log(`built ${path.relative(process.cwd(), dist) || dist}`);

const packInto = option('--pack');
if (packInto) {
  fs.mkdirSync(packInto, { recursive: true });
  const packed = execFileSync('npm', ['pack', '--json', '--pack-destination', packInto], { cwd: out, encoding: 'utf8' });
  console.log(path.join(packInto, JSON.parse(packed)[0].filename));
}
