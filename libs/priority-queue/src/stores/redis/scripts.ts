import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Cluster, Redis } from 'ioredis';
import { DYNAMIC_KEYS, FIXED_KEYS, WAKE_CHANNEL_SUFFIX } from './keys';
import { FAIR_LUA_CONSTANTS } from './codec';

/**
 * The Lua scripts of the store: one file per operation under ./lua (the source; the package
 * build copies them next to this file), each prefixed with a prelude generated from keys.ts and
 * the shared helpers of lua/lib.lua. Scripts run by EVALSHA; a NOSCRIPT reply (fresh or
 * restarted server, failover) falls back to EVAL, which also caches the script again.
 */
export const SCRIPT_NAMES = [
  'init',
  'create',
  'claim_submissions',
  'claim_polls',
  'renew_lease',
  'mark_submitted',
  'record_poll',
  'complete',
  'retry',
  'release',
  'recover_expired',
  'cancel',
  'change_priority',
  'list',
  'stats',
  'get_limits',
  'set_limits',
  'purge',
  'time',
  'requeue',
  'explain',
  'history',
  'query',
] as const;

/**
 * Scripts composed here from the operation files (no .lua of their own): each part's body runs
 * as a local function given its own ARGV (the shared header ARGV[1..3], then its own arguments),
 * in order, in one atomic call. ARGV[4] of the composed script is the number of the first part's
 * own arguments; they follow, then the second part's. Returns { first part's reply, second's }.
 */
export const COMPOSED_SCRIPTS = {
  // TaskStore.completeAndClaim: complete.lua, then claim_submissions.lua, which sees the slots it freed
  complete_and_claim: ['complete', 'claim_submissions'],
} as const;

export type ScriptName = (typeof SCRIPT_NAMES)[number] | keyof typeof COMPOSED_SCRIPTS;

export interface LuaScript {
  name: ScriptName;
  source: string;
  sha: string;
}

const LUA_DIR = join(__dirname, 'lua');

const str = (s: string) => JSON.stringify(s);

/** Definitions generated from keys.ts / codec.ts that every script runs. */
function prelude(): string {
  const dyn = Object.entries(DYNAMIC_KEYS)
    .map(([k, v]) => `${k} = ${str(v)}`)
    .join(', ');
  return ['-- generated from keys.ts', `local DYN = { ${dyn} }`, `local WAKE = ${str(WAKE_CHANNEL_SUFFIX)}`, FAIR_LUA_CONSTANTS, ''].join('\n');
}

/** Every K.<name> a script uses must be a fixed key of keys.ts (checked here, not per call). */
function checkFixedKeys(name: string, source: string): void {
  const fixed = new Set<string>(FIXED_KEYS);
  for (const m of source.matchAll(/\bK\.([A-Za-z_]\w*)/g)) {
    if (!fixed.has(m[1])) throw new Error(`${name}.lua: unknown key K.${m[1]} (not in keys.ts FIXED_KEYS)`);
  }
  if (/\bK\s*\[/.test(source)) throw new Error(`${name}.lua: K[...] cannot be checked; use K.<name>`);
}

/** One top-level definition of lib.lua's helpers part: the names it defines and its text. */
interface LibBlock {
  names: string[];
  text: string;
}

const HELPERS_MARK = /^-- helpers:/m;

/**
 * lib.lua as the part every script runs (up to the `-- helpers:` comment) and its helper
 * definitions, one block per column-0 `local` statement (with the lines up to the next one).
 */
export function splitLib(src: string): { head: string; blocks: LibBlock[] } {
  const at = src.search(HELPERS_MARK);
  if (at < 0) throw new Error('lib.lua: no line starting with "-- helpers:"');
  const blocks: LibBlock[] = [];
  for (const line of src.slice(at).split('\n')) {
    const def = /^local\s+(?:function\s+([A-Za-z_]\w*)|([A-Za-z_][\w\s,]*?)\s*=)/.exec(line);
    if (def) blocks.push({ names: def[1] ? [def[1]] : def[2].split(',').map((n) => n.trim()), text: '' });
    else if (/^local\b/.test(line)) throw new Error(`lib.lua: cannot read the definition "${line}"`);
    if (blocks.length) blocks[blocks.length - 1].text += line + '\n';
  }
  return { head: src.slice(0, at), blocks };
}

/**
 * The names Lua code in `text` uses, comments left out: a helper's comment that names another
 * helper (a block's text runs up to the next definition, so it holds the next one's comment too)
 * must not pull that helper into every script using this one (each helper is a closure made on
 * every call).
 */
const identifiers = (text: string): Set<string> => new Set(text.replace(/--[^\n]*/g, '').match(/[A-Za-z_]\w*/g) ?? []);

/** A fair share helper (`local function fair<Name>`): lib.lua calls it only where FAIR holds. */
const FAIR_ONLY = /^local function (fair[A-Z]\w*)\(/;

/**
 * The helper blocks `body` uses, directly or through other helpers, in lib.lua order. The fair
 * share helpers among them (FAIR_ONLY, one run of lib.lua) are declared where they stand but
 * built only when the call has FAIR: a closure costs each call, on a queue without fair share
 * for nothing (about 15,000 Redis CPU instructions of a claim).
 */
export function helpersFor(body: string, blocks: readonly LibBlock[]): string {
  const used = identifiers(body);
  const taken = new Set<LibBlock>();
  for (let grew = true; grew; ) {
    grew = false;
    for (const b of blocks) {
      if (taken.has(b) || !b.names.some((n) => used.has(n))) continue;
      taken.add(b);
      for (const id of identifiers(b.text)) used.add(id);
      grew = true;
    }
  }
  const chosen = blocks.filter((b) => taken.has(b));
  const fair = chosen.flatMap((b, i) => (FAIR_ONLY.test(b.text) ? [i] : []));
  if (fair.length === 0) return chosen.map((b) => b.text).join('');
  if (fair[fair.length - 1] - fair[0] !== fair.length - 1) throw new Error('lib.lua: the fair* helpers must stand together');
  const names = fair.map((i) => chosen[i].names[0]);
  const built = fair.map((i) => chosen[i].text.replace(FAIR_ONLY, (_, name: string) => `${name} = function(`)).join('');
  return [
    ...chosen.slice(0, fair[0]).map((b) => b.text),
    `local ${names.join(', ')} -- fair share helpers: built below only with FAIR (scripts.ts helpersFor)\n`,
    `if FAIR then\n${built}end\n`,
    ...chosen.slice(fair[fair.length - 1] + 1).map((b) => b.text),
  ].join('');
}

/**
 * Two operation bodies as one (see COMPOSED_SCRIPTS): each wrapped as a local function whose
 * parameter ARGV shadows the global (a `return` in the body returns from it), called with the
 * header and its own slice of the arguments. A wake the first part published is not published
 * again by the second (WOKE is reset between them; the second sets it for its own changes).
 */
export function composedBody(parts: ReadonlyArray<readonly [string, string]>): string {
  if (parts.length !== 2) throw new Error('composedBody: two parts');
  const [[a, bodyA], [b, bodyB]] = parts;
  return [
    `-- composed by scripts.ts: ${a}.lua, then ${b}.lua, in one atomic call`,
    `-- ARGV[4] m, the number of ${a}'s own arguments, ARGV[5 .. 4 + m] those, then ${b}'s own arguments`,
    `-- Returns: { ${a}'s reply, ${b}'s reply }`,
    `local function part_${a}(ARGV)`,
    bodyA,
    'end',
    `local function part_${b}(ARGV)`,
    bodyB,
    'end',
    'local function argsOf(from, to)',
    '  local t = { ARGV[1], ARGV[2], ARGV[3] }',
    '  for j = from, to do t[#t + 1] = ARGV[j] end',
    '  return t',
    'end',
    'local m = tonumber(ARGV[4])',
    `local first = part_${a}(argsOf(5, 4 + m))`,
    'WOKE = false',
    `return { first, part_${b}(argsOf(5 + m, #ARGV)) }`,
    '',
  ].join('\n');
}

let cache: Record<ScriptName, LuaScript> | null = null;

export function luaScripts(): Record<ScriptName, LuaScript> {
  if (cache) return cache;
  const lib = splitLib(readFileSync(join(LUA_DIR, 'lib.lua'), 'utf8'));
  const blocks = lib.blocks;
  const out = {} as Record<ScriptName, LuaScript>;
  const bodies = new Map<string, string>();
  const add = (name: ScriptName, body: string) => {
    const source = `${prelude()}${lib.head}${helpersFor(body, blocks)}\n-- ${name}.lua\n${body}`;
    checkFixedKeys(name, source);
    out[name] = { name, source, sha: createHash('sha1').update(source).digest('hex') };
  };
  for (const name of SCRIPT_NAMES) {
    const body = readFileSync(join(LUA_DIR, `${name}.lua`), 'utf8');
    bodies.set(name, body);
    add(name, body);
  }
  for (const [name, parts] of Object.entries(COMPOSED_SCRIPTS)) add(name as ScriptName, composedBody(parts.map((p) => [p, bodies.get(p)!])));
  cache = out;
  return out;
}

/**
 * Loads every script into the script cache of the server, or of every master of a Redis Cluster
 * (a keyless SCRIPT LOAD would reach one node only). Optional: EVALSHA falls back anyway, e.g.
 * on a replica promoted after this ran.
 */
export async function loadScripts(conn: Redis | Cluster): Promise<void> {
  const masters = conn.isCluster ? (conn as Cluster).nodes('master') : [];
  const nodes: Array<Redis | Cluster> = masters.length ? masters : [conn];
  const sources = Object.values(luaScripts()).map((s) => s.source);
  await Promise.all(nodes.flatMap((node) => sources.map((source) => node.call('SCRIPT', ['LOAD', source]))));
}

/** Redis WAIT after a write script (RedisTaskStoreOptions.waitForReplicas). */
export interface ReplicaWait {
  replicas: number;
  timeoutMs: number;
}

/** Scripts that write nothing: never followed by a WAIT. */
export const READ_ONLY_SCRIPTS: ReadonlySet<ScriptName> = new Set<ScriptName>(['list', 'stats', 'get_limits', 'time', 'history']);

/** Cluster replies meaning the command did not run on that node (see runAndWait). */
const NOT_RUN = /^(MOVED|ASK|TRYAGAIN|CLUSTERDOWN)\b/;

export async function runScript(
  conn: Redis | Cluster,
  script: LuaScript,
  keys: readonly string[],
  args: readonly (string | number)[],
  wait: ReplicaWait | null = null,
): Promise<unknown> {
  // one array for the whole command (ioredis copies it once more): the script, then its KEYS and ARGV
  const params: Array<string | number> = [script.sha, keys.length];
  for (let i = 0; i < keys.length; i++) params.push(keys[i]);
  for (let i = 0; i < args.length; i++) params.push(args[i]);
  if (wait) return runAndWait(conn, script, params, wait);
  try {
    return await conn.call('EVALSHA', params);
  } catch (e) {
    if (!(e instanceof Error && e.message.startsWith('NOSCRIPT'))) throw e;
    params[0] = script.source;
    return conn.call('EVAL', params);
  }
}

/**
 * The script and a WAIT in one pipeline: WAIT counts the writes of its own connection, and a
 * Cluster client routes the pipeline by the script's key, so both reach the queue's master on
 * one connection. ioredis re-sends a Cluster pipeline only when all its commands failed alike, so
 * a redirection of the script alone (WAIT itself has no key and succeeds) is retried here, after
 * a slot map refresh, with the client's own budget for a lone command (retryDelayOnFailover,
 * maxRedirections: during a failover nodes redirect to the dead master or answer CLUSTERDOWN
 * until its replica is elected). A script that ran but whose WAIT failed (the master died before
 * answering it) fails: its writes may be lost with the master, so they are never reported done.
 */
async function runAndWait(conn: Redis | Cluster, script: LuaScript, params: Array<string | number>, wait: ReplicaWait): Promise<unknown> {
  const options = conn.isCluster ? (conn as Cluster).options : {};
  const tries = options.maxRedirections ?? 16;
  const delayMs = options.retryDelayOnFailover || 100;
  let command = 'EVALSHA';
  for (let notRun = 0; ; ) {
    const replies = await conn
      .pipeline()
      .call(command, ...params)
      .call('WAIT', String(wait.replicas), String(wait.timeoutMs))
      .exec();
    const [[err, reply], [waitErr]] = replies!;
    if (!err) {
      // the script ran, but whether a replica has its writes is unknown (connection lost)
      if (waitErr) throw waitErr;
      return reply;
    }
    if (command === 'EVALSHA' && err.message.startsWith('NOSCRIPT')) {
      command = 'EVAL';
      params[0] = script.source;
    } else if (NOT_RUN.test(err.message) && ++notRun < tries) {
      if (conn.isCluster) (conn as Cluster).refreshSlotsCache();
      await new Promise((r) => setTimeout(r, delayMs));
    } else {
      throw err;
    }
  }
}
