/**
 * Self time per function (and per file) of V8 .cpuprofile files, summed, as µs per task.
 * `node -r ./test/support/register.js test/bench/profile/cpuprofile-top.ts <tasks per profile> <file.cpuprofile>...`
 */
import { readFileSync } from 'node:fs';

interface Node {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
}
interface Profile {
  nodes: Node[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

const perTask = Number(process.argv[2]);
const files = process.argv.slice(3);
const byFn = new Map<string, number>();
const byFile = new Map<string, number>();
let total = 0;
for (const f of files) {
  const p = JSON.parse(readFileSync(f, 'utf8')) as Profile;
  const nodes = new Map(p.nodes.map((n) => [n.id, n]));
  for (let i = 0; i < p.samples.length; i++) {
    const dt = p.timeDeltas[i] ?? 0;
    const n = nodes.get(p.samples[i])!;
    const url = n.callFrame.url.replace(/^.*\/node_modules\//, 'nm/').replace(/^.*\/work\/main\//, '');
    const key = `${n.callFrame.functionName || '(anon)'} ${url}:${n.callFrame.lineNumber + 1}`;
    byFn.set(key, (byFn.get(key) ?? 0) + dt);
    const file = url.startsWith('nm/') ? url.split('/').slice(0, 2).join('/') : url || '(native)';
    byFile.set(file, (byFile.get(file) ?? 0) + dt);
    total += dt;
  }
}
const tasks = perTask * files.length;
const show = (m: Map<string, number>, k: number) =>
  [...m.entries()].sort((a, b) => b[1] - a[1]).slice(0, k).forEach(([name, us]) =>
    console.log(`${(us / tasks).toFixed(2).padStart(7)} µs/task ${((100 * us) / total).toFixed(1).padStart(5)}%  ${name}`));
console.log(`profiled ${(total / 1000).toFixed(0)} ms over ${tasks} tasks = ${(total / tasks).toFixed(1)} µs/task (wall time of the sampled thread, idle included)`);
console.log('--- by package / file');
show(byFile, 25);
console.log('--- by function (self)');
show(byFn, 40);
