#!/usr/bin/env node
// Builds the publishable package libs/priority-queue: TypeScript to dist/, plus the non-TS assets
// (Lua scripts of the Redis store, the dashboard's page, script and stylesheet), plus the README.
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const lib = path.join(__dirname, '..', 'libs', 'priority-queue');
fs.rmSync(path.join(lib, 'dist'), { recursive: true, force: true });
execFileSync(process.execPath, [require.resolve('typescript/bin/tsc'), '-p', path.join(lib, 'tsconfig.lib.json')], { stdio: 'inherit' });

function copyAssets(dir) {
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const from = path.join(dir, entry.name);
    if (entry.isDirectory()) copyAssets(from);
    else if (entry.name.endsWith('.lua') || entry.name.endsWith('.sql') || path.basename(dir) === 'assets') {
      const to = path.join(lib, 'dist', path.relative(path.join(lib, 'src'), from));
      fs.mkdirSync(path.dirname(to), { recursive: true });
      fs.copyFileSync(from, to);
    }
  }
}
copyAssets(path.join(lib, 'src'));
fs.copyFileSync(path.join(__dirname, '..', 'README.md'), path.join(lib, 'README.md'));
console.log('built libs/priority-queue/dist');
