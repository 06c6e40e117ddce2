import type { Cluster, Redis } from 'ioredis';
import { emptyProviderLimits, KEY_SEPARATOR, type LimitsSnapshot, type ProviderLimits } from '../../core/admission';
import { explainTask, type AdmissionKeys, type TaskExplanation } from '../../core/explain';
import { parseHistoryText, withCreation, type TaskHistoryEntry } from '../../core/history';
import type { Task } from '../../core/task';
import { encodeCursor, positionAfter, searchPage, type QueryPosition, type ResolvedTaskQuery, type TaskPage, type TaskQuery } from '../../core/task-query';
import { validateTaskQuery } from '../../core/validation';
import { decodeTask, fairTagOfHex, hashToObject, optArg, taskOfHashReply } from './codec';
import { idempotencyHashKey, type QueueKeys } from './keys';

type Flat = string[];

/**
 * The Redis store's side of the operations retry / explain / history / query: script
 * arguments and replies (lua/requeue.lua, explain.lua, history.lua, query.lua).
 */

/** get_limits.lua's reply (lib.lua limitsSnapshot) as a LimitsSnapshot. */
export function limitsOf(reply: [Array<string | Flat>, Flat, Flat, string | null, Flat, Flat?]): LimitsSnapshot {
  const [providers, accounts, tenants, defaultTenant, cks, weights] = reply;
  const snap: LimitsSnapshot = {
    providers: {},
    accounts: {},
    tenants: {},
    defaultTenantQuota: defaultTenant === null ? null : Number(defaultTenant),
    concurrencyKeys: {},
    tenantWeights: {},
  };
  for (let i = 0; i < providers.length; i += 2) {
    const h = hashToObject(providers[i + 1] as Flat);
    const limits: ProviderLimits = emptyProviderLimits();
    limits.paused = h.paused === '1';
    limits.qps = h.qps === undefined ? null : Number(h.qps);
    limits.burst = h.burst === undefined ? null : Number(h.burst);
    limits.accountConcurrency = h.accountConcurrency === undefined ? null : Number(h.accountConcurrency);
    snap.providers[providers[i] as string] = limits;
  }
  for (const [k, v] of Object.entries(hashToObject(accounts))) {
    const [providerKey, accountId] = splitAccount(k);
    snap.accounts[k] = { providerKey, accountId, concurrency: Number(v) };
  }
  for (const [k, v] of Object.entries(hashToObject(tenants))) snap.tenants[k] = Number(v);
  for (const [k, v] of Object.entries(hashToObject(cks))) snap.concurrencyKeys[k] = Number(v);
  for (const [k, v] of Object.entries(hashToObject(weights ?? []))) snap.tenantWeights[k] = Number(v);
  return snap;
}

export function splitAccount(k: string): [string, string] {
  const i = k.indexOf(KEY_SEPARATOR);
  return [k.slice(0, i), k.slice(i + 1)];
}

function numbers(flat: Flat): Record<string, number> {
  const o: Record<string, number> = {};
  for (let i = 0; i + 1 < flat.length; i += 2) o[flat[i]] = Number(flat[i + 1]);
  return o;
}

export type ExplainReply = [string, Flat, Parameters<typeof limitsOf>[0], Flat, Flat, Flat, Flat, Array<string | number>, number];

export function explainReply(reply: ExplainReply): Promise<TaskExplanation> {
  const [now, task, limits, gcra, accounts, tenants, cks, lanes, backlog] = reply;
  const state = { limits: limitsOf(limits), tat: numbers(gcra), accounts: numbers(accounts), tenants: numbers(tenants), concurrencyKeys: numbers(cks) };
  return explainTask(decodeTask(task), Number(now), state, (admissible, cap) => {
    let n = 0;
    for (let i = 0; i < lanes.length && n < cap; i += 2) {
      const [providerKey, accountId, tenantId, concurrencyKey] = JSON.parse(String(lanes[i])) as [string, string | null, string | null, string | null];
      const keys: AdmissionKeys = { providerKey, accountId, tenantId, concurrencyKey };
      if (admissible(keys)) n += Number(lanes[i + 1]);
    }
    // due delayed tasks left unmoved (a backlog of more than 5,000): the count is a lower bound
    return Number(backlog) === 1 ? Math.max(n, cap) : Math.min(n, cap);
  });
}

export function historyReply(reply: [string, string | null], limit: number): TaskHistoryEntry[] {
  return withCreation({ createdAt: Number(reply[0]) }, parseHistoryText(reply[1]), limit);
}

/** Candidates query.lua reads per call at most (a page filtered by type, or narrowly, may stop short). */
export const QUERY_BUDGET = 2000;

export function queryArgs(query: TaskQuery): { q: ResolvedTaskQuery; args: string[] } {
  const q = validateTaskQuery(query);
  const p = q.position;
  const cursor =
    p === null
      ? ['', '', '', '', '']
      : p.phase === 'due'
        ? ['d', p.after.priority, p.after.runAt, p.after.createdAt, p.after.seq].map(String)
        : p.phase === 'later'
          ? ['l', String(p.runAt), String(p.seq), '', '']
          : ['s', String(p.before), '', '', ''];
  const opt = (v: string | number | undefined) => optArg(v === undefined ? null : String(v));
  return {
    q,
    args: [
      q.status,
      String(q.limit + 1),
      String(QUERY_BUDGET),
      ...cursor,
      opt(q.type === undefined ? undefined : JSON.stringify(q.type)),
      opt(q.tenantId),
      opt(q.providerKey),
      opt(q.accountId),
      opt(q.minPriority),
      opt(q.maxPriority),
      // query.lua ARGV[18]: the cursor's fair tag (fair share)
      p !== null && p.phase === 'due' && p.after.fairTag != null ? p.after.fairTag : '',
    ],
  };
}

export type QueryReply = [string, Flat[], string[] | null];

export function queryReply(q: ResolvedTaskQuery, reply: QueryReply): TaskPage {
  const [nowS, rows, stop] = reply;
  const now = Number(nowS);
  const tasks = rows.map(decodeTask);
  if (tasks.length > q.limit) return { tasks: tasks.slice(0, q.limit), nextCursor: encodeCursor(q.status, fairPositionAfter(tasks[q.limit - 1], q.status, now)) };
  if (!stop) return { tasks, nextCursor: null };
  const n = stop.slice(1).map(Number);
  const tag = stop[5] ? { fairTag: fairTagOfHex(stop[5]) } : {};
  const cursor =
    stop[0] === 'd'
      ? encodeCursor(q.status, { phase: 'due', after: { priority: n[0], runAt: n[1], createdAt: n[2], seq: n[3], ...tag } })
      : stop[0] === 'l'
        ? encodeCursor(q.status, { phase: 'later', runAt: n[0], seq: n[1] })
        : encodeCursor(q.status, { phase: 'seq', before: n[0] });
  return { tasks, nextCursor: cursor };
}

/** core/task-query.ts positionAfter, with the task's fair tag in a due position (fair share: the tag is part of the order). */
function fairPositionAfter(t: Task, status: Parameters<typeof positionAfter>[1], now: number): QueryPosition {
  const p = positionAfter(t, status, now);
  if (p.phase === 'due' && t.fairTag !== null) p.after.fairTag = t.fairTag;
  return p;
}

/** A `search` query: the task of that id and the task of that idempotency key. */
export async function searchIn(conn: Redis | Cluster, keys: QueueKeys, q: ResolvedTaskQuery, now: number, agingIntervalMs: number): Promise<TaskPage> {
  const search = q.search!;
  const byKey = (await conn.call('HGET', [idempotencyHashKey(keys), search])) as string | null;
  const found: Array<Task | null> = [];
  for (const id of byKey === null ? [search] : [search, byKey]) {
    found.push(taskOfHashReply(await conn.call('HGETALL', [keys.task(id)])));
  }
  return searchPage(found, q, now, agingIntervalMs);
}

