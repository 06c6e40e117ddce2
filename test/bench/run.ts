/**
 * `npm run bench [-- --quick] [--targets=a,b] [--scenarios=x,y] [--seed=N] [--node=24]`
 *
 * Starts its own servers (the test harness: loopback, temp dirs), runs every scenario against
 * every target one after the other on the same servers, prints one Markdown table with ratios
 * ours / peer on the same server, checks the targets of the store issues and appends JSON lines
 * to .bench-results/results.jsonl. `--node=24` runs all of it on Node 24 with the newer peers
 * (lib/runtime.ts).
 */
import './lib/peers'; // first: under --node=24 the runtime's peers serve require()
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { checkTargets } from './checks';
import { gitCommit, machineFacts, serverVersions } from './lib/machine';
import { ensureRuntime, NODE_BUILDS, reexec } from './lib/runtime';
import { appendResults, formatValue, ratio, renderTable, type Cell, type Column, type RowKey } from './lib/report';
import { startServers } from './lib/servers';
import { nowMs } from './lib/stats';
import type { Scenario } from './scenario';
import { SCENARIOS } from './scenarios';
import { FULL, QUICK } from './sizes';
import type { BenchTarget, ServerKind } from './target';
import { PEERS, TARGETS } from './targets';

interface Args {
  quick: boolean;
  targets: string[] | null;
  scenarios: string[] | null;
  seed: number;
  record: boolean;
  repeat: number;
  /** Major version of Node to run on (`--node=24`); null: this process's. */
  node: string | null;
}

function parseArgs(argv: string[]): Args {
  const args: Args = { quick: false, targets: null, scenarios: null, seed: 42, record: true, repeat: 1, node: null };
  for (const a of argv) {
    const [k, v] = a.split('=');
    if (k === '--quick') args.quick = true;
    else if (k === '--node') args.node = v;
    else if (k === '--targets') args.targets = v.split(',');
    else if (k === '--scenarios') args.scenarios = v.split(',');
    else if (k === '--seed') args.seed = Number(v);
    else if (k === '--no-record') args.record = false;
    else if (k === '--repeat') args.repeat = Math.max(1, Number(v) || 1);
    else if (k === '--help' || k === '-h') {
      console.log(
        [
          'npm run bench [-- --quick] [--targets=a,b] [--scenarios=x,y] [--seed=42] [--repeat=1] [--no-record] [--node=24]',
          '',
          `  --targets    default: ${TARGETS.filter((t) => !t.optional).map((t) => t.id).join(',')}`,
          `               only when named: ${TARGETS.filter((t) => t.optional).map((t) => t.id).join(',')}`,
          '               (+roc: removeOnComplete from BENCH_REMOVE_ON_COMPLETE, default true; see targets/remove-on-complete.ts)',
          `  --scenarios  default: all of ${SCENARIOS.map((s) => s.id).join(',')}`,
          '               (-defaults: every system with its out-of-the-box settings; idle: defaults only)',
          '  --repeat=N   N rounds alternating the target order, each cell keeps its best value',
          `  --node=N     run everything on Node N (${Object.keys(NODE_BUILDS).join(' or ')}: installed once into`,
          '               $BENCH_RUNTIME_DIR or ~/.cache/nestjs-priority-queue-bench, with pg-boss 12 and',
          '               graphile-worker 0.18 from test/bench/runtime/package.json), or this process\'s major',
          '  --quick      reduced sizes (sizes.ts QUICK)',
        ].join('\n'),
      );
      process.exit(0);
    } else throw new Error(`unknown argument ${a}`);
  }
  return args;
}

const log = (m: string) => console.error(m);

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  const args = parseArgs(argv);
  const current = process.versions.node.split('.')[0];
  if (args.node && !(args.node === current && (process.env.BENCH_PEERS_ROOT || !NODE_BUILDS[current]))) {
    if (!NODE_BUILDS[args.node]) throw new Error(`--node=${args.node}: this process runs Node ${current}; installable: ${Object.keys(NODE_BUILDS).join(', ')}`);
    const runtime = ensureRuntime(args.node, log);
    log(`running on ${runtime.node} with the peers of ${runtime.peersRoot}`);
    process.exit(await reexec(runtime, args.node, argv.filter((a) => !a.startsWith('--node'))));
  }
  const sizes = args.quick ? QUICK : FULL;
  const started = nowMs();
  const runId = randomBytes(3).toString('hex');
  const chosen = TARGETS.filter((t) => (args.targets ? args.targets.includes(t.id) : !t.optional));
  const scenarios = SCENARIOS.filter((s) => !args.scenarios || args.scenarios.includes(s.id));
  if (args.targets) for (const t of args.targets) if (!TARGETS.some((x) => x.id === t)) throw new Error(`unknown target ${t}`);
  if (args.scenarios) for (const s of args.scenarios) if (!SCENARIOS.some((x) => x.id === s)) throw new Error(`unknown scenario ${s}`);

  log(`bench run ${runId}${args.quick ? ' (quick)' : ''}: ${chosen.map((t) => t.id).join(', ')}`);
  const servers = await startServers(new Set<ServerKind>(chosen.map((t) => t.server)), log);
  const targets = new Map<string, BenchTarget>();
  const cells: Cell[] = [];
  const broken = new Map<string, string>();
  try {
    for (const entry of chosen) {
      try {
        const t = entry.load()(servers.env);
        await t.open();
        targets.set(entry.id, t);
      } catch (e) {
        broken.set(entry.id, firstLine(e));
        log(`${entry.id}: cannot open (${firstLine(e)})`);
      }
    }
    for (const scenario of scenarios) {
      // With --repeat, rounds alternate the target order and each cell keeps its best value:
      // other load on the machine only ever makes a figure worse.
      const rounds: Cell[][] = [];
      for (let round = 0; round < args.repeat; round++) {
        const order = round % 2 === 0 ? chosen : [...chosen].reverse();
        const got: Cell[] = [];
        for (const entry of order) {
          const target = targets.get(entry.id);
          if (!target || !scenario.applies(target)) continue;
          got.push(...(await runOne(scenario, target, sizes, args.seed, runId, servers.env)));
        }
        rounds.push(got);
      }
      cells.push(...bestOf(rounds));
    }
  } finally {
    for (const t of targets.values()) await t.close().catch((e) => log(`${t.id}: close failed (${firstLine(e)})`));
    // A peer's pool may still hold an idle connection that the server's shutdown terminates; its
    // 'error' event must not crash the run after every figure was taken.
    process.on('uncaughtException', (e) => log(`after the run: ${firstLine(e)}`));
    await servers.stop();
  }

  const rows = collectRows(cells, scenarios, sizes, [...targets.values()]);
  const columns = buildColumns(chosen.map((c) => c.id), targets, cells);
  console.log('');
  console.log(renderTable(rows, columns));
  const notes = cells.filter((c) => c.error || c.note);
  if (notes.length) {
    console.log('');
    for (const c of notes) console.log(`- ${c.target} / ${c.metric}: ${c.error ? 'FAILED: ' + c.error : c.note}`);
  }
  for (const [id, why] of broken) console.log(`- ${id}: not run (${why})`);
  console.log('');
  console.log('Targets (issues 3, 4, 6, 15):');
  for (const c of checkTargets(cells)) console.log(`  ${c.ok === null ? '?' : c.ok ? 'met   ' : 'MISSED'} ${c.name}: ${c.detail}`);
  const machine = machineFacts();
  console.log('');
  console.log(
    `machine: ${machine.nproc} CPUs (${machine.cpuModel}), ${machine.memoryGiB} GiB, Node ${machine.node}, ${machine.os}; ` +
      `run ${runId} took ${((nowMs() - started) / 1000).toFixed(0)} s`,
  );
  if (args.record) {
    const file = appendResults(
      join(__dirname, '..', '..', '.bench-results'),
      { runId, at: new Date().toISOString(), quick: args.quick, seed: args.seed, commit: gitCommit(), machine, servers: serverVersions() },
      cells,
      targets,
    );
    console.log(`results appended to ${file}`);
  }
}

async function runOne(scenario: Scenario, target: BenchTarget, sizes: typeof FULL, seed: number, runId: string, env: import('./target').BenchEnv): Promise<Cell[]> {
  const t0 = nowMs();
  log(`${scenario.id} / ${target.id} ...`);
  try {
    const measured = await scenario.run({
      target,
      env,
      sizes,
      seed,
      namespace: (suffix) => `b${runId}_${suffix}`,
      log: (m) => log(`  ${target.id}: ${m}`),
    });
    log(`${scenario.id} / ${target.id}: ${measured.map((m) => `${m.metric}=${formatValue(m.value, m.unit)}`).join(' ')} (${((nowMs() - t0) / 1000).toFixed(1)} s)`);
    return measured.map((m) => ({ ...m, target: target.id, scenario: scenario.id, profile: scenario.profile ?? 'tuned' }));
  } catch (e) {
    log(`${scenario.id} / ${target.id}: FAILED ${firstLine(e)}`);
    return scenario.metrics(sizes, target).map((m) => ({ ...m, value: null, target: target.id, scenario: scenario.id, profile: scenario.profile ?? 'tuned', error: firstLine(e) }));
  }
}

/** Per target and metric, the best value over the rounds (violations: the worst); growth factors re-derived. */
function bestOf(rounds: Cell[][]): Cell[] {
  if (rounds.length === 1) return rounds[0];
  const groups = new Map<string, Cell[]>();
  for (const c of rounds.flat()) {
    const key = `${c.target}\u0000${c.metric}`;
    groups.set(key, [...(groups.get(key) ?? []), c]);
  }
  const out: Cell[] = [];
  for (const list of groups.values()) {
    const ok = list.filter((c) => !c.error && c.value !== null);
    if (ok.length === 0) {
      out.push(list[0]);
      continue;
    }
    const pick = ok.reduce((a, b) => {
      const av = a.value!;
      const bv = b.value!;
      if (a.better === 'higher') return bv > av ? b : a;
      if (a.better === 'lower') return bv < av ? b : a;
      return bv > av ? b : a;
    });
    out.push({ ...pick, rounds: ok.map((c) => c.value!) });
  }
  // growth factors from the best per-level costs, not the best of the per-round factors
  for (const c of out) {
    if (c.metric !== 'backlog.growth' && c.metric !== 'backlog.terminal-growth') continue;
    const levels = out.filter((x) => x.target === c.target && /^backlog\.\d+$/.test(x.metric)).sort((a, b) => Number(a.metric.slice(8)) - Number(b.metric.slice(8)));
    const first = levels[0]?.value;
    const num = c.metric === 'backlog.growth' ? levels[levels.length - 1]?.value : out.find((x) => x.target === c.target && x.metric === 'backlog.terminal')?.value;
    if (first && num) c.value = num / first;
    c.rounds = undefined;
  }
  return out;
}

function collectRows(cells: Cell[], scenarios: readonly Scenario[], sizes: typeof FULL, targets: BenchTarget[]): RowKey[] {
  const rows: RowKey[] = [];
  const seen = new Set<string>();
  for (const s of scenarios) {
    for (const t of targets) {
      if (!s.applies(t)) continue;
      for (const m of s.metrics(sizes, t)) {
        if (seen.has(m.metric) || !cells.some((c) => c.metric === m.metric)) continue;
        seen.add(m.metric);
        rows.push(m);
      }
    }
  }
  return rows;
}

function buildColumns(ids: string[], targets: Map<string, BenchTarget>, cells: Cell[]): Column[] {
  const value = (id: string, metric: string) => cells.find((c) => c.target === id && c.metric === metric);
  const cols: Column[] = [];
  for (const id of ids) {
    const t = targets.get(id);
    if (!t) continue;
    const header = t.ours ? `ours ${t.server}${t.variant ? ' ' + t.variant : ''}` : t.label;
    cols.push({
      header,
      value: (r) => {
        const c = value(id, r.metric);
        if (!c) return '';
        return c.error ? 'FAIL' : formatValue(c.value, r.unit);
      },
    });
    // ratio columns go right after the last peer of a group
    for (const [ours, peers] of Object.entries(PEERS)) {
      if (!targets.has(ours) || !peers.includes(id)) continue;
      cols.push({
        header: `ours${targets.get(ours)?.variant ?? ''}/${t.label}`,
        value: (r) => ratio(value(ours, r.metric)?.value, value(id, r.metric)?.value, r),
      });
    }
  }
  return cols;
}

function firstLine(e: unknown): string {
  return ((e as Error)?.message ?? String(e)).split('\n')[0];
}

main().then(() => process.exit(0), (e) => {
  console.error(e);
  process.exit(1);
});
