import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Cluster, Redis } from 'ioredis';
import { CLAIM_FIELDS } from './codec';
import { DYNAMIC_KEYS, FIXED_KEYS, WAKE_CHANNEL_SUFFIX } from './keys';

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
  'recover_expired',
  'cancel',
  'change_priority',
  'list',
  'stats',
  'get_limits',
  'set_limits',
  'purge',
] as const;

export type ScriptName = (typeof SCRIPT_NAMES)[number];

export interface LuaScript {
  name: ScriptName;
  source: string;
  sha: string;
}

const LUA_DIR = join(__dirname, 'lua');

function prelude(): string {
  const str = (s: string) => JSON.stringify(s);
  const dyn = Object.entries(DYNAMIC_KEYS)
    .map(([k, v]) => `${k} = ${str(v)}`)
    .join(', ');
  return [
    '-- generated from keys.ts',
    `local FIXED = { ${FIXED_KEYS.map((k) => `[${str(k)}] = true`).join(', ')} }`,
    `local DYN = { ${dyn} }`,
    `local WAKE = ${str(WAKE_CHANNEL_SUFFIX)}`,
    `local CLAIM_FIELDS = { ${CLAIM_FIELDS.map(str).join(', ')} }`,
    `local CF = { ${CLAIM_FIELDS.map((f, i) => `${f} = ${i + 1}`).join(', ')} }`,
    '',
  ].join('\n');
}

let cache: Record<ScriptName, LuaScript> | null = null;

export function luaScripts(): Record<ScriptName, LuaScript> {
  if (cache) return cache;
  const head = prelude() + readFileSync(join(LUA_DIR, 'lib.lua'), 'utf8');
  const out = {} as Record<ScriptName, LuaScript>;
  for (const name of SCRIPT_NAMES) {
    const source = `${head}\n-- ${name}.lua\n${readFileSync(join(LUA_DIR, `${name}.lua`), 'utf8')}`;
    out[name] = { name, source, sha: createHash('sha1').update(source).digest('hex') };
  }
  cache = out;
  return out;
}

/** Loads every script into the server's script cache (optional: EVALSHA falls back anyway). */
export async function loadScripts(conn: Redis | Cluster): Promise<void> {
  await Promise.all(Object.values(luaScripts()).map((s) => conn.call('SCRIPT', ['LOAD', s.source])));
}

export async function runScript(
  conn: Redis | Cluster,
  script: LuaScript,
  keys: readonly string[],
  args: readonly (string | number)[],
): Promise<unknown> {
  const params = [keys.length, ...keys, ...args];
  try {
    return await conn.call('EVALSHA', [script.sha, ...params]);
  } catch (e) {
    if (e instanceof Error && e.message.startsWith('NOSCRIPT')) return conn.call('EVAL', [script.source, ...params]);
    throw e;
  }
}
