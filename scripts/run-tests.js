#!/usr/bin/env node
// Runs the whole jest suite, then prints the plain summary line "N passed, N failed" that CI reads.
// Extra arguments go to jest (e.g. `npm test -- test/contract`).
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const out = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'pq-jest-')), 'results.json');
const args = [require.resolve('jest/bin/jest'), '--json', `--outputFile=${out}`, ...process.argv.slice(2)];
const run = spawnSync(process.execPath, args, { stdio: 'inherit', env: process.env });
let passed = 0;
let failed = 0;
let skipped = 0;
try {
  const r = JSON.parse(fs.readFileSync(out, 'utf8'));
  passed = r.numPassedTests;
  failed = r.numFailedTests + r.numRuntimeErrorTestSuites;
  skipped = r.numPendingTests + r.numTodoTests;
} catch {
  failed += 1; // no results file: jest itself failed
}
const code = run.status === 0 && failed === 0 ? 0 : 1;
console.log(`${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}`);
process.exit(code);
