/**
 * Every user-facing message of the library, in one place (model: nestjs/bull's messages file).
 * Each says what was wrong and what to do.
 */
export const Messages = {
  unknownType: (type: string, known: readonly string[]) =>
    `Unknown task type "${type}". Register a @PriorityTask('${type}') handler in this process or declare the type in PriorityQueueModule options (taskTypes). Known types: ${known.length ? known.join(', ') : '(none)'}.`,
  duplicateHandler: (type: string, a: string, b: string) =>
    `Task type "${type}" has two handlers (${a} and ${b}). Each type needs exactly one @PriorityTask handler.`,
  handlerShape: (type: string, name: string) =>
    `Handler ${name} for "${type}" must implement run(), or submit() and poll().`,
  invalidSubmit: (details: string) => `Invalid task: ${details}. Nothing was queued.`,
  payloadNotJson: (reason: string) =>
    `Invalid task: payload is not JSON-serialisable (${reason}). Pass plain objects, arrays, strings, finite numbers, booleans or null. Nothing was queued.`,
  payloadTooLarge: (bytes: number, max: number) =>
    `Invalid task: payload is ${bytes} bytes once serialised, above the limit of ${max} bytes (option maxPayloadBytes). Store large data elsewhere and pass a reference. Nothing was queued.`,
  /** One problem of a submit (a detail of invalidSubmit, which ends the sentence). */
  priorityRule: (value: unknown) => priorityRule(value),
  invalidPriority: (value: unknown) =>
    `Invalid priority: got ${shown(value)}${notInteger(value)}; use an integer from -2147483648 to 2147483647 (larger = more urgent). Nothing was changed.`,
  payloadTooDeep: (max: number) =>
    `payload nests arrays and objects more than ${max} levels deep; flatten it or pass a reference to the data`,
  invalidTaskId: (value: unknown) =>
    `Invalid task id: got ${shown(value)}; pass the id that submit returned (a string of 1 to 255 characters, no control characters, no lone UTF-16 surrogates). Nothing was changed.`,
  invalidLimit: (what: string, value: unknown, expected: string) =>
    `Invalid limit ${what}: got ${shown(value)}, expected ${expected}. Limits were not changed.`,
  unknownLimitFields: (kind: string, fields: readonly string[], allowed: readonly string[]) =>
    `Invalid limit update of kind '${kind}': unknown ${fields.length > 1 ? 'fields' : 'field'} ${fields.join(', ')} (allowed: ${allowed.join(', ')}). Limits were not changed.`,
  invalidOption: (what: string, value: unknown, expected: string) =>
    `Invalid option ${what} = ${String(value)}: expected ${expected}.`,
  // what a handler hands back (core/handler-output.ts)
  noExternalId: (type: string) => `submit() of "${type}" returned no external id: return the provider's job id (a non-empty string) or { externalId }.`,
  badExternalId: (type: string, got: string, max: number) =>
    `submit() of "${type}" returned the external id ${got}, which cannot be stored: use at most ${max} characters, without NUL or lone UTF-16 surrogates. The provider may have accepted the job: look for it there.`,
  resultNotJson: (type: string, fn: string, reason: string) =>
    `${fn}() of "${type}" returned a result that is not JSON-serialisable (${reason}): return plain objects, arrays, strings, numbers, booleans or null.`,
  badPollResult: (type: string, got: string) =>
    `poll() of "${type}" returned ${got}: return { done: false, nextPollMs? }, { done: true, result? } or { done: true, failed: 'why' }. Counted as a poll error.`,
  invalidRemoveOption: (where: string, value: unknown, expected: string) =>
    `Invalid option ${where} = ${shown(value)}: expected ${expected}. Nothing was registered.`,
  taskNotFound: (id: string) => `Task ${id} does not exist (or was purged after its retention, or removed when it finished: removeOnComplete / removeOnFail).`,
  notPending: (id: string, status: string) =>
    `Task ${id} is ${status}: its priority can only change while it is PENDING_SUBMIT.`,
  staleLease: (id: string) =>
    `Task ${id} was changed by someone else (lease expired or fenced out); this write was rejected. The current holder or the recovery owns it now.`,
  shutdownStepLate: (what: string, waitedMs: number) =>
    `Shutdown: ${what} did not finish within ${waitedMs} ms (the store does not answer?); the shutdown goes on without it.`,
  stopGaveUp: (owner: string, waitedMs: number, running: number) =>
    `Worker ${owner} stopped without its store's answers: the store did not answer within ${waitedMs} ms (shutdownGraceMs + the hand-back writes). ${running} task(s) it held were not handed back; their leases expire and the recovery gives them to other workers (nothing is lost). Check the connection to the store.`,
  leaseExpired: (id: string, leaseUntil: number) =>
    `Task ${id}: its lease runs out at ${new Date(leaseUntil).toISOString()} and the store did not answer its renewals, so its handler was aborted (after that, the recovery may give the task to another worker). Check the worker's connection to the store; raise leaseMs if renewals are slow.`,
  deadlinePassed: (id: string, deadlineAt: number) =>
    `Task ${id} passed its deadline (${new Date(deadlineAt).toISOString()}): its handler was aborted and the task ends TIMED_OUT; a late result is discarded. Raise timeoutMs if the work needs longer.`,
  storeClosed: () => `The task store is closed. Create a new store or restart the application.`,
  idempotencyConflict: (key: string, fields: readonly string[]) =>
    `Idempotency key ${JSON.stringify(key)} already belongs to a task with another ${fields.join(' and ')}. Nothing was queued. A key names one operation: submit again with the same type, tenant and payload to get that task back, or use a new key for a different operation.`,
  scheduleModuleMissing: () =>
    `PriorityQueueModule workers need @nestjs/schedule: import ScheduleModule.forRoot() once in your root module (the library never imports it itself), or set workers: { enabled: false } in a producer-only process.`,
  unknownStoreType: (type: unknown) =>
    `Unknown store ${typeof type === 'object' && type !== null ? JSON.stringify(type) : String(type)}: use memoryStore(), redisStore({ url } | { connection }) from nestjs-priority-queue/redis, typeormStore({ dataSource }) from nestjs-priority-queue/typeorm, a TaskStore instance, or the configs { type: 'memory' }, { type: 'redis', connection }, { type: 'typeorm', dataSource }.`,
  queueNotFound: (name: string, known: readonly string[]) =>
    `Queue "${name}" is not registered in this application. Registered queues: ${known.length ? known.join(', ') : '(none)'}.`,
  driverMissing: (driver: string, store: string) =>
    `The ${store} store needs the "${driver}" package: npm install ${driver}.`,
  invalidState: (id: string, status: string, operation: string) =>
    `Task ${id} is ${status}: ${operation} does not apply in that status. Nothing was changed.`,
  // named queues, events and module set-up (nest/)
  wrongQueue: (type: string, queue: string, owner: string) =>
    `Task type "${type}" belongs to queue "${owner}", not "${queue}": submit it through that queue's TaskManager (@InjectTaskManager('${owner}')). Nothing was queued.`,
  typeInTwoQueues: (type: string, a: string, b: string) =>
    `Task type "${type}" is registered in queue "${a}" and in queue "${b}". A type belongs to one queue: keep one @PriorityTask / taskTypes entry, or rename one of the types.`,
  queueNotRegistered: (queue: string, who: string) =>
    `${who} uses queue "${queue}", which is not registered: add PriorityQueueModule.registerQueue({ name: '${queue}' }) to the imports of a module.`,
  rootImportedTwice: () =>
    `PriorityQueueModule.forRoot() / forRootAsync() is imported twice in this application: that would make two stores and two workers, and limits set through one would not hold for the tasks of the other. Import it once (in the root module; it is global), and use registerQueue() for more queues.`,
  queueRegisteredTwice: (queue: string) =>
    `Queue "${queue}" is registered twice in this application (PriorityQueueModule.registerQueue / forRoot). Register each queue once, in one module, and export it (or set isGlobal: true) where other modules need it.`,
  queueStoredTwice: (queue: string, other: string, stored: string) =>
    `Queues "${other}" and "${queue}" would both live in the store's queue "${stored}" (the { type, queue } store config names the default queue "${stored}"). Give the named queue another name.`,
  rootMissing: (queue: string) =>
    `PriorityQueueModule.registerQueue({ name: '${queue}' }) needs PriorityQueueModule.forRoot() (or forRootAsync()) imported once in the application, as a global module (the default: isGlobal is true).`,
  singleStoreQueues: (queue: string) =>
    `Queue "${queue}" cannot be created: forRoot({ store }) was given one TaskStore instance, which holds one queue. Pass a store backend instead (memoryStore(), redisStore() from nestjs-priority-queue/redis, typeormStore() from nestjs-priority-queue/typeorm), or give registerQueue({ name: '${queue}', store }) a TaskStore of its own.`,
  badQueueName: (name: unknown) =>
    `Invalid queue name ${JSON.stringify(name)}: use 1 to 64 characters from letters, digits, '.', '_' and '-'.`,
  badEventName: (where: string, name: unknown, known: readonly string[]) =>
    `${where}: unknown task event ${JSON.stringify(name)}. Use one of: ${known.join(', ')}.`,
  promClientMissing: () =>
    `PriorityQueueModule option metrics needs the optional package "prom-client": npm install prom-client (or remove the metrics option).`,
  waitTimeout: (id: string, ms: number, status: string | null) =>
    `Task ${id} did not finish within ${ms} ms (last seen ${status ?? 'nowhere'}). It is not cancelled: wait again, or cancel it.`,
  factoryArgument: (name: string, value: unknown, forms: string, detail?: string) =>
    `${name}() got ${typeof value === 'string' ? `the string ${JSON.stringify(value.length > 40 ? value.slice(0, 40) + '…' : value)}` : value === null ? 'null' : typeof value === 'object' ? `{ ${Object.keys(value as object).join(', ')} }` : String(value)}${detail ? ` (${detail})` : ''}: use ${forms}.`,
  notRedisConnection: (where: string, got: string) =>
    `${where} must be an ioredis client (new Redis(...) or new Cluster(...)), got ${got}. For a URL use redisStore({ url }) from nestjs-priority-queue/redis (the library then opens and closes the connection).`,
  notDataSource: (where: string, looksLikeOptions: boolean) =>
    looksLikeOptions
      ? `${where} must be a TypeORM DataSource, got DataSource options: create it with new DataSource(options) and initialize() it, or inject the one of @nestjs/typeorm (inject: [DataSource]).`
      : `${where} must be a TypeORM DataSource (new DataSource(options), initialized, or the one of @nestjs/typeorm).`,
  redisWaiting: (where: string, status: string, lastError: string | null, timeoutMs: number) =>
    `Waiting for ${where} (${status}${lastError ? `, last error: ${lastError}` : ''}); start-up fails if it does not answer within ${timeoutMs} ms (initTimeoutMs).`,
  redisUnavailable: (where: string, timeoutMs: number, lastError: string | null) =>
    `${where} did not answer within ${timeoutMs} ms (initTimeoutMs)${lastError ? `; last error: ${lastError}` : ''}. Start Redis or fix the connection settings, or raise initTimeoutMs.`,
  redisClosed: (where: string) => `The connection to ${where} is closed (quit() or disconnect() was called before the application started).`,
  // Dashboard (nestjs-priority-queue/dashboard)
  dashboardNoAuth: () =>
    `PriorityQueueDashboardModule needs a guard: pass the app's admin guard (a CanActivate class or instance) as \`guard\`. Without one it starts only with readOnly: true and unsafeNoAuth: true, and then anyone who can reach the path can read every task.`,
  dashboardBadPath: (path: unknown) =>
    `Invalid dashboard path ${JSON.stringify(path)}: use URL path segments of letters, digits, '-', '_' or '.', e.g. 'admin/queues'.`,
  dashboardReadOnly: () => `The dashboard is read-only (readOnly: true): nothing was changed.`,
  dashboardNeedsHeader: (header: string) =>
    `Changes through the dashboard API need the header ${header}: 1 (it keeps other sites from sending them with your cookies). Nothing was changed.`,
  dashboardNeedsQueueModule: () =>
    `PriorityQueueDashboardModule found no TaskManager: import PriorityQueueModule.forRoot(...) (or forRootAsync) in the application.`,
  dashboardBadParam: (what: string, value: unknown, expected: string) =>
    `Invalid ${what} ${JSON.stringify(value)}: expected ${expected}.`,
  // TypeORM store
  unsupportedDriver: (type: string) =>
    `The TypeORM task store supports the DataSource types "postgres", "mysql", "mariadb", "better-sqlite3" and "sqlite", not "${type}".`,
  badTablePrefix: (prefix: string) =>
    `Invalid tablePrefix "${prefix}": use 1 to 31 letters, digits or underscores, starting with a letter or underscore.`,
  badQueue: (queue: unknown) => `Invalid queue ${shown(queue)}: use a string of 1 to 64 characters without control characters or lone UTF-16 surrogates.`,
  // scheduling policies (DESIGN §7)
  fairnessMismatch: (queue: string, stored: string | null, wanted: string | null) =>
    `Queue "${queue}" was created with fairness = ${stored === null ? 'off' : `'${stored}'`}, this store asks for ${wanted === null ? 'off' : `'${wanted}'`}. The order of every index depends on it: use the same value in every process, or a new queue name.`,
  agingWithFairness: (agingIntervalMs: number) =>
    `Invalid options: agingIntervalMs = ${agingIntervalMs} together with fairness: 'tenant'. Aging and fair share both reorder a priority level and do not combine: choose one (fair share for tenants, aging for the wait of any task) or use two queues.`,
  weightWithoutFairness: (queue: string) =>
    `Queue "${queue}" does not use fair share (fairness: 'tenant'), so a tenant weight would change nothing. Open the queue's store with fairness: 'tenant' (a new queue name: it is fixed for a queue's life). Limits were not changed.`,
  boostNeedsDeadline: (type: string) =>
    `Invalid task: a deadline boost needs a deadline, and this "${type}" task has none. Give the submit a timeoutMs (or the task type a timeoutMs option), or leave the boost out. Nothing was queued.`,
  notSupportedByStore: (feature: string, store: string) =>
    `${feature} is not supported by ${store} (its policies say so). The library's stores (memory, Redis, TypeORM) all implement it: use one of them, or leave it off. Nothing was written.`,
  fairTagOverflow: () =>
    `The fair tags of this queue reached the largest value its store keeps exactly (2^53 - 1 on the memory, Redis and SQLite stores: about 9e9 tasks created at one priority level; 2^63 - 1 on PostgreSQL and MySQL / MariaDB). Move the work to a new queue name; nothing was queued.`,
  agingMismatch: (queue: string, stored: number, wanted: number) =>
    `Queue "${queue}" was created with agingIntervalMs = ${stored}, this store asks for ${wanted}. The order of every index depends on it: use the same value in every process, or a new queue name.`,
  dataSourceNotInitialized: () =>
    `The TypeORM DataSource is not initialized: call dataSource.initialize() (or let @nestjs/typeorm do it) before init() of the task store.`,
  schemaMissing: (prefix: string, found: number, needed: number) =>
    `The task store's schema under table prefix "${prefix}" is ${found === 0 ? 'missing' : `at version ${found}`}, this version of the library needs version ${needed}. Run its migrations: priorityQueueMigrations({ tablePrefix: '${prefix}' }) in your DataSource's migrations, or construct the store with migrate: true (the default) so that init() runs them.`,
  // operations: retry, explain, history, query
  cannotRetry: (id: string, status: string) =>
    `Task ${id} is ${status}: only a FAILED, TIMED_OUT, CANCELED or SUBMIT_UNKNOWN task can be retried. Nothing was changed.`,
  invalidQuery: (details: string) => `Invalid task query: ${details}.`,
  badCursor: () => `Invalid task query: the cursor is not one this query returned. Start again without a cursor.`,
  explainNotPending: (id: string, status: string) =>
    `Task ${id} is ${status}, not waiting to be submitted: nothing holds it back.`,
  explainNotDue: (id: string, dueAt: number, now: number) =>
    `Task ${id} is not due yet: it may start in ${formatMs(dueAt - now)} (at ${new Date(dueAt).toISOString()}).`,
  explainRefused: (id: string, r: { limit: string; key: string; inUse?: number; max?: number | null; nextTokenAt?: number }, now: number) => {
    const key = r.key.replace('\u001f', '/');
    switch (r.limit) {
      case 'paused':
        return `Task ${id} waits because provider "${key}" is paused; resume it to let its tasks start.`;
      case 'rate':
        return `Task ${id} waits for the rate limit of provider "${key}": its next submit token is due in ${formatMs((r.nextTokenAt ?? now) - now)}.`;
      case 'account':
        return `Task ${id} waits for a free slot of account "${key}": ${r.inUse} of ${r.max} in use.`;
      case 'tenant':
        return `Task ${id} waits for a free slot of tenant "${key}": ${r.inUse} of ${r.max} in use.`;
      default:
        return `Task ${id} waits for concurrency key "${key}": ${r.inUse} of ${r.max} in use.`;
    }
  },
  explainWaiting: (id: string, ahead: number, capped: boolean) =>
    `Task ${id} can start now but ${capped ? `more than ${ahead}` : ahead} due task${ahead === 1 && !capped ? '' : 's'} of admissible lanes rank${ahead === 1 && !capped ? 's' : ''} before it; it starts when a worker has claimed ${ahead === 1 && !capped ? 'that one' : 'those'}.`,
  explainNext: (id: string) => `Task ${id} can start now and ranks first among the admissible tasks: the next claim takes it.`,
} as const;

function priorityRule(value: unknown): string {
  return `priority must be an integer from -2147483648 to 2147483647 (larger = more urgent), got ${shown(value)}${notInteger(value)}`;
}

function notInteger(value: unknown): string {
  return typeof value === 'string' ? ', not an integer' : '';
}

/** A value as a message shows it: strings quoted and escaped (and cut when long), the kind of anything else. */
export function shown(v: unknown): string {
  switch (typeof v) {
    case 'string': {
      const q = JSON.stringify(v.length > 64 ? v.slice(0, 64) : v);
      return `${v.length > 64 ? q.slice(0, -1) + '..."' : q} (a string${v.length > 64 ? ` of ${v.length} characters` : ''})`;
    }
    case 'number':
    case 'boolean':
      return String(v);
    case 'bigint':
      return `${v}n (a BigInt)`;
    case 'undefined':
      return 'undefined';
    case 'object':
      return v === null ? 'null' : Array.isArray(v) ? 'an array' : 'an object';
    default:
      return `a ${typeof v}`;
  }
}

/** A duration for a message: ms, s, min or h. */
function formatMs(ms: number): string {
  const v = Math.max(0, ms);
  if (v < 1000) return `${Math.ceil(v)} ms`;
  if (v < 120_000) return `${Math.round(v / 100) / 10} s`;
  if (v < 7_200_000) return `${Math.round(v / 6000) / 10} min`;
  return `${Math.round(v / 360_000) / 10} h`;
}
