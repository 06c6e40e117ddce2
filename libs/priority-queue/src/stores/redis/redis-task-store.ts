// Above ~400 lines on purpose: the TaskStore port (some thirty methods), each a short call of
// its Lua script (./lua) or of operations.ts, plus the error mapping and lease cache they share;
// one file per group of port methods would hide which method does what.
import { randomUUID } from 'node:crypto';
import type { LimitUpdate, LimitsSnapshot } from '../../core/admission';
import { FairTagOverflowError, IdempotencyConflictError, InvalidStateError, StaleLeaseError, StoreClosedError, TaskNotFoundError, ValidationError } from '../../core/errors';
import type { IdempotencyField } from '../../core/idempotency';
import { Messages } from '../../core/messages';
import { intOption, validateHistoryLimit, validateLimitUpdate, validateOrderOptions } from '../../core/validation';
import { refuseBoosts, refuseWeights } from '../../core/policies';
import type { Fairness } from '../../core/fairness';
import { answerOf } from '../../core/complete-and-claim';
import type { RemovalRule } from '../../core/removal';
import type { TaskHistoryEntry } from '../../core/history';
import type { TaskExplanation } from '../../core/explain';
import type { TaskPage, TaskQuery } from '../../core/task-query';
import { explainReply, historyReply, limitsOf, queryArgs, queryReply, searchIn, splitAccount, type ExplainReply, type QueryReply } from './operations';
import { ALL_STATUSES, TaskStatus, type Fence, type NewTask, type Task, type Transition } from '../../core/task';
import type {
  ClaimRequest,
  Clock,
  CompleteAndClaimResult,
  CompleteCall,
  CompletionOutcome,
  CreateResult,
  ListQuery,
  PollOutcome,
  QueueStats,
  RetryOutcome,
  StoreOptions,
  StorePolicies,
  SubmissionClaim,
  SubmittedOutcome,
  SweepRequest,
  TaskStore,
  WakeReason,
} from '../../core/task-store.port';
import {
  claimedHash,
  CREATE_FIELDS_PER_TASK,
  changeArg,
  pushCreateArgs,
  createdTask,
  decodeHash,
  decodeTask,
  hashToObject,
  optArg,
  serializePayload,
  taskOfHashReply,
} from './codec';
import { KEY_LAYOUT, queueKeys, type QueueKeys } from './keys';
import { LeaseCache, type Leased } from '../shared/lease-cache';
import { TurnBatcher } from '../shared/turn-batcher';
import { READ_ONLY_SCRIPTS, loadScripts, luaScripts, runScript, type ReplicaWait, type ScriptName } from './scripts';
import { WakeSubscriptions } from './wake-subscriptions';
import { assertRedisConnection, type RedisConnection } from './connection-check';
import { RedisEventTransport } from './event-transport';
import type { TaskEventTransport } from '../../core/event-transport.port';
import { settledWithin, SHUTDOWN_WAIT_MS } from '../../core/timers';

export interface RedisTaskStoreOptions extends StoreOptions {
  /** An ioredis connection (or Cluster); the store never closes it. Subscriptions use `duplicate()`s. */
  connection: RedisConnection;
  /** Isolates applications sharing one Redis (default `pq`). */
  prefix?: string;
  /** Queue name inside the prefix (default `default`). */
  queue?: string;
  /**
   * Redis WAIT after every write: a call returns once `replicas` replicas acknowledged its
   * writes, or after `timeoutMs` (the write then stands on the primary alone). An acknowledged
   * write then survives a failover to a replica that acknowledged it; each write costs a replica
   * round trip, and writes stall for `timeoutMs` while fewer replicas are connected. Default off
   * (asynchronous replication). See docs/REDIS.md, "Failover".
   */
  waitForReplicas?: ReplicaWait;
}

type Flat = string[];

interface PendingComplete {
  fence: Fence;
  status: string;
  /** JSON, or null for a null result. */
  result: string | null;
  /** changeArg of the error: '~' unchanged, '' null, '+' .. text. */
  error: string;
  /** A failed submit attempt: attempts + 1. */
  attempt: boolean;
  /** removeOnComplete / removeOnFail (core/removal.ts), or null. */
  remove: RemovalRule | null;
}

/**
 * A task this store handed out under a lease, as the server holds it: its hash and the decoded
 * task (read only: its admission keys go into the complete instead of being read by the script).
 */
interface LeasedTask extends Leased {
  hash: Record<string, string>;
  task: Task;
}

/** complete.lua's reply: now, then (index, row) for each complete whose reply is not 1. */
type CompleteReply = [string, ...Array<number | string | Flat>];

/** historyLimit of a Redis store without the option: none (see RedisTaskStore.historyLimit). */
export const REDIS_DEFAULT_HISTORY_LIMIT = 0;

/** Most completes sent in one script call. */
const MAX_COMPLETE_BATCH = 500;

/**
 * TaskStore on Redis (ioredis 5). Every state change is one Lua script (./lua, one file per
 * operation); all keys of a queue share the hash tag `{prefix:queue}` (Redis Cluster). Claims
 * follow LANES.md: per-lane sorted sets of fixed-width order keys (core/order-key.ts) where
 * only lane heads compete, parked lanes per blocking resource, GCRA per provider, all inside
 * claim_submissions.lua. The clock is Redis TIME unless `clock` is given.
 */
export class RedisTaskStore implements TaskStore {
  readonly agingIntervalMs: number;
  /**
   * DESIGN §7 fair share, fixed for the queue's life (init refuses a store that differs from the
   * recorded one): tags in create.lua, V[p] in claim_submissions.lua, re-tags in
   * change_priority.lua and boosts (lib.lua fair* helpers, mirroring core/fairness.ts). Deadline
   * boosts fire in claim_submissions.lua (lib.lua applyDueBoosts, mirroring core/boost.ts).
   */
  readonly fairness: Fairness | null;
  readonly policies: StorePolicies = { fairness: true, boost: true };
  /** @internal The queue's Redis keys (stores/redis/keys.ts). */
  readonly keys: QueueKeys;
  private readonly connection: RedisConnection;
  private readonly clock: Clock | null;
  private readonly replicaWait: ReplicaWait | null;
  private readonly wakes: WakeSubscriptions;
  private initialized: Promise<void> | null = null;
  /** init() has succeeded: run() no longer waits for it (an await of a settled promise still costs a turn). */
  private ready = false;
  private closed = false;
  /** Hashes of the tasks handed out under a lease (shared/lease-cache.ts). */
  private readonly leased = new LeaseCache<LeasedTask>();
  /** Completes of one event-loop turn, sent as one script call. */
  private readonly completes = new TurnBatcher<PendingComplete, Task>({
    maxBatch: MAX_COMPLETE_BATCH,
    keyOf: (c) => c.fence.id,
    send: (batch) => this.sendCompletes(batch),
    onFailure: (e, c) => this.mapError(e, 'complete', c.fence.id),
  });
  /**
   * Transitions kept per task (history()); 0 = none, the default here: history costs the Redis
   * server about 5% more CPU per drained task (docs/BENCHMARKS.md). Set it (e.g. 20) for a
   * dashboard's task detail.
   */
  readonly historyLimit: number;
  /** ARGV[3] of every script: agingIntervalMs, historyLimit and ':f' with fair share (lib.lua). */
  private readonly mode: string;
  private readonly queue: string;

  constructor(options: RedisTaskStoreOptions) {
    const order = validateOrderOptions(options);
    this.agingIntervalMs = order.agingIntervalMs;
    this.fairness = order.fairness;
    assertRedisConnection(options.connection, 'RedisTaskStore({ connection })');
    this.historyLimit = validateHistoryLimit(options.historyLimit, REDIS_DEFAULT_HISTORY_LIMIT);
    this.mode = `${this.agingIntervalMs}:${this.historyLimit}${this.fairness === null ? '' : ':f'}`;
    this.connection = options.connection;
    this.clock = options.clock ?? null;
    this.queue = options.queue ?? 'default';
    this.keys = queueKeys(options.prefix ?? 'pq', this.queue);
    this.replicaWait = validateReplicaWait(options.waitForReplicas);
    this.wakes = new WakeSubscriptions(this.connection, this.keys.channel);
  }

  async init(): Promise<void> {
    this.assertOpen();
    this.initialized ??= (async () => {
      // init first: a Cluster client knows its masters only once connected (loadScripts needs them)
      const [aging, fairness] = (await this.raw('init', [KEY_LAYOUT])) as [string, string];
      await loadScripts(this.connection);
      const recorded = Number(aging);
      if (recorded !== this.agingIntervalMs) {
        throw new ValidationError(Messages.agingMismatch(this.keys.base, recorded, this.agingIntervalMs));
      }
      const fair = fairness === 'off' ? null : fairness;
      if (fair !== this.fairness) throw new ValidationError(Messages.fairnessMismatch(this.keys.base, fair, this.fairness));
      this.ready = true;
    })().catch((e) => {
      this.initialized = null;
      throw e;
    });
    return this.initialized;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    // completes still out go on their own; a server that does not answer must not hold close()
    await settledWithin(this.completes.drain(), SHUTDOWN_WAIT_MS);
    this.closed = true;
    this.leased.clear();
    await this.wakes.closeAll();
  }

  /** @internal Task transitions of this queue between processes: Redis pub/sub (at most once); the module subscribes. */
  createEventTransport(): TaskEventTransport {
    return new RedisEventTransport(this.connection, this.keys.events);
  }

  async now(): Promise<number> {
    this.assertOpen();
    if (this.clock) return this.clock.now();
    return Number(await this.raw('time', []));
  }

  async create(tasks: readonly NewTask[]): Promise<CreateResult[]> {
    if (tasks.length === 0) return [];
    refuseBoosts('RedisTaskStore', this.policies, tasks);
    const payloads = new Array<string>(tasks.length);
    const args: string[] = [String(tasks.length)];
    for (let i = 0; i < tasks.length; i++) pushCreateArgs(args, tasks[i], (payloads[i] = serializePayload(tasks[i].payload)));
    if (args.length !== 1 + tasks.length * CREATE_FIELDS_PER_TASK) throw new Error('create: argument layout mismatch');
    let reply: [string, number, string[], ...Array<[number, Flat]>];
    try {
      reply = (await this.run('create', args)) as typeof reply;
    } catch (e) {
      const message = e instanceof Error ? e.message : '';
      const dup = /PQ_DUPLICATE (\S+)/.exec(message);
      if (dup) throw new ValidationError(Messages.invalidSubmit(`a task with id "${dup[1]}" already exists`), [`id: duplicate "${dup[1]}"`]);
      const idem = /PQ_IDEMCONFLICT (\d+) ([\w,]+) ("(?:[^"\\]|\\.)*")/.exec(message);
      if (idem) {
        const i = Number(idem[1]);
        throw new IdempotencyConflictError(tasks[i].idempotencyKey!, idem[2].split(',') as IdempotencyField[], JSON.parse(idem[3]) as string, i);
      }
      throw e;
    }
    // { now, first seq, tags, [i, HGETALL] of each input that named an existing task... } (indexed: no rest destructuring per call)
    const now = Number(reply[0]);
    const tags = reply[2];
    const out = new Array<CreateResult>(tasks.length);
    for (let j = 3; j < reply.length; j++) {
      const [i, flat] = reply[j] as [number, Flat];
      out[i - 1] = { task: decodeTask(flat), created: false };
    }
    let seq = Number(reply[1]);
    let k = 0;
    for (let i = 0; i < tasks.length; i++) {
      if (out[i] !== undefined) continue;
      const task = createdTask(tasks[i], payloads[i], now, seq++);
      if (this.fairness !== null) task.fairTag = String(tags[k++]);
      out[i] = { task, created: true };
    }
    return out;
  }

  async get(id: string): Promise<Task | null> {
    this.assertOpen();
    return taskOfHashReply(await this.connection.call('HGETALL', [this.keys.task(id)]));
  }

  async list(query: ListQuery): Promise<Task[]> {
    const rows = (await this.run('list', [
      query.status,
      query.afterSeq === undefined ? '' : String(query.afterSeq),
      String(query.limit),
    ])) as Flat[];
    return rows.map(decodeTask);
  }

  /**
   * One claim_submissions call, again while the script says a bound on one call's work (due
   * tasks moved, timeouts) ended it early with due work left: a claim never stops early while
   * ready lanes remain (DESIGN §3). Each call is atomic and sees the claims of the one before.
   */
  async claimSubmissions(request: ClaimRequest): Promise<SubmissionClaim> {
    const limit = Math.max(0, request.limit);
    const out: SubmissionClaim = { claimed: [], timedOut: [], nextWakeAt: null };
    for (;;) {
      const { claim, more } = await this.claimOnce(request, limit - out.claimed.length);
      out.claimed.push(...claim.claimed);
      out.timedOut.push(...claim.timedOut);
      out.nextWakeAt = claim.nextWakeAt;
      if (claim.boosted) (out.boosted ??= []).push(...claim.boosted);
      if (!more || out.claimed.length >= limit) return out;
    }
  }

  /** `completeArgs`: complete.lua's arguments, sent first in the same call (complete_and_claim); its reply comes back as `completed`. */
  private async claimOnce(request: ClaimRequest, limit: number, completeArgs?: string[]): Promise<{ claim: SubmissionClaim; more: boolean; completed?: unknown }> {
    const lbase = leasePrefix();
    const claimArgs = [request.owner, String(limit), String(request.leaseMs), lbase];
    let reply: unknown;
    let completed: unknown;
    if (completeArgs) [completed, reply] = (await this.run('complete_and_claim', [String(completeArgs.length), ...completeArgs, ...claimArgs])) as [unknown, unknown];
    else reply = await this.run('claim_submissions', claimArgs);
    const [now, leaseUntil, claimed, errs, timedOut, wake, more, boosted] = reply as [string, string, string[], Array<number | string>, Flat[], string | null, number, Array<string | Flat>];
    const errors = new Map<number, string>();
    for (let i = 0; i < errs.length; i += 2) errors.set(Number(errs[i]), String(errs[i + 1]));
    const claim: SubmissionClaim = {
      // the script returns each hash as it was before the claim: apply the claim's writes
      claimed: claimed.map((values, i) => {
        const h = claimedHash(values, errors.get(i + 1), this.agingIntervalMs, this.fairness !== null);
        h.status = TaskStatus.SUBMITTING;
        h.leaseOwner = request.owner;
        h.leaseId = lbase + (i + 1);
        h.leaseUntil = leaseUntil;
        h.updatedAt = now;
        h.version = String(Number(h.version) + 1);
        const task = decodeHash(h);
        this.leased.set(task.id, { hash: h, task, leaseId: h.leaseId, version: task.version });
        return task;
      }),
      timedOut: timedOut.map(decodeTask),
      nextWakeAt: wake === undefined || wake === null ? null : Number(wake),
    };
    for (let i = 0; i < boosted.length; i += 2) {
      (claim.boosted ??= []).push({ fromPriority: Number(boosted[i]), task: decodeTask(boosted[i + 1] as Flat) });
    }
    return { claim, more: Number(more) === 1, completed };
  }

  async claimPolls(request: ClaimRequest): Promise<Task[]> {
    if (request.limit <= 0) return [];
    const rows = (await this.run('claim_polls', [
      request.owner,
      String(request.limit),
      String(request.leaseMs),
      leasePrefix(),
    ])) as Flat[];
    return rows.map((flat) => this.remember(flat));
  }

  async renewLease(fence: Fence, leaseMs: number): Promise<Task> {
    return this.fenced('renew_lease', fence, [String(leaseMs)]);
  }

  async markSubmitted(fence: Fence, outcome: SubmittedOutcome): Promise<Task> {
    return this.fenced('mark_submitted', fence, [outcome.externalId, outcome.status, String(outcome.pollDelayMs)]);
  }

  async recordPoll(fence: Fence, outcome: PollOutcome): Promise<Task> {
    return this.fenced('record_poll', fence, [
      outcome.status,
      String(outcome.nextPollDelayMs),
      String(outcome.pollErrors),
      changeArg(outcome.error),
    ]);
  }

  /**
   * Completes issued during one event-loop turn go to Redis as one script call (each checked and
   * applied on its own); a task this store handed out is rebuilt here instead of read back.
   */
  async complete(fence: Fence, outcome: CompletionOutcome): Promise<Task> {
    this.assertOpen();
    return this.completes.add(this.pendingComplete(fence, outcome));
  }

  /**
   * complete.lua's completes, then claim_submissions.lua, in ONE script call (scripts.ts composes
   * complete_and_claim from the two files); more claim calls follow only when the claim was cut
   * short, as in claimSubmissions.
   */
  async completeAndClaim(completes: readonly CompleteCall[], request: ClaimRequest): Promise<CompleteAndClaimResult> {
    this.assertOpen();
    const batch = completes.map((c) => this.pendingComplete(c.fence, c.outcome));
    const limit = Math.max(0, request.limit);
    const { args, known } = this.completeArgs(batch);
    const first = await this.claimOnce(request, limit, args);
    const completed = await Promise.all(this.completeAnswers(batch, known, first.completed as CompleteReply).map((a) => answerOf(Promise.resolve(a))));
    const claim = first.claim;
    if (first.more && claim.claimed.length < limit) {
      const rest = await this.claimSubmissions({ ...request, limit: limit - claim.claimed.length });
      claim.claimed.push(...rest.claimed);
      claim.timedOut.push(...rest.timedOut);
      claim.nextWakeAt = rest.nextWakeAt;
      if (rest.boosted) (claim.boosted ??= []).push(...rest.boosted);
    }
    return { completed, claim };
  }

  /** One `complete` script call for a batch; a task this store handed out sends its admission keys. */
  private async sendCompletes(batch: readonly PendingComplete[]): Promise<Array<Task | Promise<Task>>> {
    const { args, known } = this.completeArgs(batch);
    return this.completeAnswers(batch, known, (await this.run('complete', args)) as CompleteReply);
  }

  private pendingComplete(fence: Fence, outcome: CompletionOutcome): PendingComplete {
    const result = outcome.result === undefined || outcome.result === null ? null : JSON.stringify(outcome.result);
    return { fence, status: outcome.status, result, error: changeArg(outcome.error), attempt: outcome.attempt === true, remove: outcome.remove ?? null };
  }

  /** complete.lua's arguments for a batch; `known`: the leased tasks the batch's fences match. */
  private completeArgs(batch: readonly PendingComplete[]): { args: string[]; known: Array<LeasedTask | undefined> } {
    const known = batch.map((c) => this.leased.match(c.fence));
    const args: string[] = [String(batch.length)];
    batch.forEach((c, i) => {
      args.push(c.fence.id, c.fence.leaseId, String(c.fence.version));
      const rm = c.remove;
      const mark = (rm ? '#' : '') + (c.attempt ? '!' : '');
      if (c.result === null && c.error === '~') args.push(mark + c.status);
      else args.push(mark + '+' + c.status, optArg(c.result), c.error);
      if (rm) {
        if (rm.now) args.push('0', '', '');
        else args.push(rm.count === null ? '' : String(rm.count), rm.ageMs === null ? '' : String(rm.ageMs), known[i]?.task.type ?? '');
      }
      const k = known[i];
      if (k) {
        const t = k.task;
        const deadline = t.deadlineAt === null ? 0 : 1;
        args.push(k.hash.seq, t.providerKey);
        if (t.accountId === null && t.tenantId === null && t.concurrencyKey === null) args.push(String(deadline));
        else args.push(String(deadline + 2), optArg(t.accountId), optArg(t.tenantId), optArg(t.concurrencyKey));
      } else {
        args.push('');
      }
    });
    return { args, known };
  }

  /** complete.lua's reply: each complete's task as written, or a rejected promise of its error. */
  private completeAnswers(batch: readonly PendingComplete[], known: Array<LeasedTask | undefined>, reply: CompleteReply): Array<Task | Promise<Task>> {
    const [now, ...listed] = reply;
    const rows = new Map<number, string | Flat>();
    for (let j = 0; j < listed.length; j += 2) rows.set(Number(listed[j]), listed[j + 1] as string | Flat);
    return batch.map((c, i) => {
      try {
        return this.completed(c, rows.get(i + 1) ?? 1, known[i], now);
      } catch (e) {
        return Promise.reject(e);
      }
    });
  }

  /** One complete's reply: the task as written, or the error the script reported for it. */
  private completed(c: PendingComplete, row: 1 | string | Flat, cached: LeasedTask | undefined, now: string): Task {
    const id = c.fence.id;
    if (typeof row === 'string') throw this.mapError(new Error(row), 'complete', id);
    this.leased.delete(id);
    if (Array.isArray(row)) return decodeTask(row);
    // the cached hash plus the script's writes, applied to the decoded task (no copy of the hash)
    const task = decodeHash(cached!.hash);
    const at = Number(now);
    task.status = c.status as TaskStatus;
    task.finishedAt = at;
    task.updatedAt = at;
    task.version = c.fence.version + 1;
    task.leaseOwner = null;
    task.leaseId = null;
    task.leaseUntil = null;
    task.nextPollAt = null;
    if (c.attempt) task.attempts += 1;
    task.result = c.result === null ? null : JSON.parse(c.result);
    if (c.error !== '~') task.error = c.error === '' ? null : c.error.slice(1);
    return task;
  }

  async retry(fence: Fence, outcome: RetryOutcome): Promise<Task> {
    return this.fenced('retry', fence, [String(Math.max(0, outcome.delayMs)), outcome.error]);
  }

  async release(fence: Fence): Promise<Task> {
    return this.fenced('release', fence, []);
  }

  async recoverExpired(limit: number): Promise<Transition[]> {
    if (limit <= 0) return [];
    const rows = (await this.run('recover_expired', [String(limit), '', ''])) as Array<[string, string, Flat]>;
    return rows.map(([from, to, flat]) => ({ from: from as TaskStatus, to: to as TaskStatus, task: decodeTask(flat) }));
  }

  /** recover_expired.lua with the queue's sweep lease (key `sweep`), in the same script call. */
  async sweepExpired(request: SweepRequest): Promise<Transition[] | null> {
    if (request.limit <= 0) return [];
    const leaseMs = Math.max(1, Math.floor(request.leaseMs));
    const rows = (await this.run('recover_expired', [String(request.limit), String(leaseMs), request.owner])) as Array<[string, string, Flat]> | number;
    if (typeof rows === 'number') return null;
    return rows.map(([from, to, flat]) => ({ from: from as TaskStatus, to: to as TaskStatus, task: decodeTask(flat) }));
  }

  async cancel(id: string): Promise<Task | null> {
    const flat = (await this.run('cancel', [id])) as Flat | null;
    return flat ? decodeTask(flat) : null;
  }

  async changePriority(id: string, priority: number): Promise<Task> {
    return decodeTask((await this.run('change_priority', [id, String(priority)], id)) as Flat);
  }

  async stats(): Promise<QueueStats> {
    const [nowStr, counts, pend, p, a, t, c] = (await this.run('stats', [...ALL_STATUSES])) as [
      string,
      number[],
      string[],
      Flat,
      Flat,
      Flat,
      Flat,
    ];
    const byStatus = {} as Record<TaskStatus, number>;
    ALL_STATUSES.forEach((s, i) => (byStatus[s] = Number(counts[i])));
    const pending: QueueStats['pending'] = [];
    for (let i = 0; i < pend.length; i += 3) {
      pending.push({ priority: Number(pend[i]), count: Number(pend[i + 1]), oldestWaitMs: Number(pend[i + 2]) });
    }
    pending.sort((x, y) => y.priority - x.priority);
    const counters = (flat: Flat) => {
      const o: Record<string, number> = {};
      for (const [k, v] of Object.entries(hashToObject(flat))) if (Number(v) > 0) o[k] = Number(v);
      return o;
    };
    return {
      now: Number(nowStr),
      byStatus,
      pending,
      inFlightByProvider: counters(p),
      inFlightByAccount: Object.entries(counters(a)).map(([k, count]) => {
        const [providerKey, accountId] = splitAccount(k);
        return { providerKey, accountId, count };
      }),
      inFlightByTenant: counters(t),
      inFlightByConcurrencyKey: counters(c),
    };
  }

  async getLimits(): Promise<LimitsSnapshot> {
    return limitsOf((await this.run('get_limits', [])) as Parameters<typeof limitsOf>[0]);
  }

  async setLimits(update: LimitUpdate): Promise<LimitsSnapshot> {
    if (update.kind === 'tenantWeight') validateLimitUpdate(update); // as memory does: a bad weight first
    refuseWeights('RedisTaskStore', this.policies, update, this.fairness, this.queue);
    let args: string[];
    switch (update.kind) {
      case 'provider':
        args = [
          update.providerKey,
          changeArg(update.paused),
          changeArg(update.qps),
          changeArg(update.burst),
          changeArg(update.accountConcurrency),
        ];
        break;
      case 'account':
        args = [update.providerKey, update.accountId, changeArg(update.concurrency)];
        break;
      case 'tenant':
        args = [update.tenantId, changeArg(update.quota)];
        break;
      case 'defaultTenant':
        args = [changeArg(update.quota)];
        break;
      case 'concurrencyKey':
        args = [update.key, changeArg(update.limit)];
        break;
      case 'tenantWeight':
        args = [update.tenantId, changeArg(update.weight)];
        break;
      default:
        throw new ValidationError(Messages.invalidLimit('kind', (update as { kind: unknown }).kind, 'provider, account, tenant, defaultTenant, concurrencyKey or tenantWeight'));
    }
    await this.run('set_limits', [update.kind, ...args]);
    return this.getLimits();
  }

  async purge(olderThan: number, limit: number): Promise<number> {
    if (limit <= 0) return 0;
    return Number(await this.run('purge', [String(olderThan), String(limit)]));
  }

  // --- operations (operations.ts) -----------------------------------------------------

  async requeue(id: string): Promise<Transition> {
    const [from, flat] = (await this.run('requeue', [id], id)) as [string, Flat];
    return { task: decodeTask(flat), from: from as TaskStatus, to: TaskStatus.PENDING_SUBMIT };
  }

  async explain(id: string): Promise<TaskExplanation> {
    return explainReply((await this.run('explain', [id], id)) as ExplainReply);
  }

  async history(id: string): Promise<TaskHistoryEntry[]> {
    const reply = (await this.run('history', [id], id)) as [string, string | null] | null;
    if (reply === null) throw new TaskNotFoundError(id);
    return historyReply(reply, this.historyLimit);
  }

  async query(query: TaskQuery): Promise<TaskPage> {
    const { q, args } = queryArgs(query);
    if (q.search !== undefined) return searchIn(this.connection, this.keys, q, await this.now(), this.agingIntervalMs);
    return queryReply(q, (await this.run('query', args)) as QueryReply);
  }

  async subscribe(listener: (what?: WakeReason) => void): Promise<() => Promise<void>> {
    this.assertOpen();
    return this.wakes.subscribe(listener);
  }

  // --- plumbing -------------------------------------------------------------------------

  private assertOpen(): void {
    if (this.closed) throw new StoreClosedError();
  }

  private async fenced(name: ScriptName, fence: Fence, args: string[]): Promise<Task> {
    const flat = (await this.run(name, [fence.id, fence.leaseId, String(fence.version), ...args], fence.id)) as Flat;
    return this.remember(flat);
  }

  /** Decodes a task hash; keeps it in the lease cache while it holds a lease. */
  private remember(flat: Flat): Task {
    const h = hashToObject(flat);
    const task = decodeHash(h);
    if (task.leaseId !== null) this.leased.set(task.id, { hash: h, task, leaseId: task.leaseId, version: task.version });
    else this.leased.delete(task.id);
    return task;
  }

  private async run(name: ScriptName, args: readonly string[], taskId?: string): Promise<unknown> {
    this.assertOpen();
    if (!this.ready) await this.init();
    try {
      return await runScript(
        this.connection,
        luaScripts()[name],
        this.keys.route,
        this.header(args),
        this.replicaWait === null || READ_ONLY_SCRIPTS.has(name) ? null : this.replicaWait,
      );
    } catch (e) {
      throw this.mapError(e, name, taskId);
    }
  }

  /** Runs a script without waiting for init (init itself uses it). */
  private async raw(name: ScriptName, args: readonly string[]): Promise<unknown> {
    return runScript(this.connection, luaScripts()[name], this.keys.route, this.header(args));
  }

  /** ARGV of a script call: the header every script reads (lib.lua: base, now or '' for Redis TIME, mode), then `args`. */
  private header(args: readonly string[]): string[] {
    return [this.keys.base, this.clock ? String(this.clock.now()) : '', this.mode, ...args];
  }

  private mapError(e: unknown, name: ScriptName, taskId: string | undefined): unknown {
    const msg = e instanceof Error ? e.message : '';
    const code = /PQ_[A-Z]+(?: [A-Z_]+)?/.exec(msg)?.[0];
    if (code === 'PQ_FAIRTAG') return new FairTagOverflowError();
    if (!code || taskId === undefined) return e;
    if (code === 'PQ_STALE') return new StaleLeaseError(taskId);
    if (code === 'PQ_NOTFOUND') return new TaskNotFoundError(taskId);
    if (code.startsWith('PQ_STATE')) {
      const status = code.slice('PQ_STATE '.length);
      return new InvalidStateError(
        name === 'change_priority'
          ? Messages.notPending(taskId, status)
          : name === 'requeue'
            ? Messages.cannotRetry(taskId, status)
            : Messages.invalidState(taskId, status, name),
      );
    }
    return e;
  }
}

function validateReplicaWait(w: ReplicaWait | undefined): ReplicaWait | null {
  if (w === undefined) return null;
  return { replicas: intOption('waitForReplicas.replicas', w.replicas, null, 1), timeoutMs: intOption('waitForReplicas.timeoutMs', w.timeoutMs, null, 1) };
}

function leasePrefix(): string {
  return randomUUID() + ':';
}
