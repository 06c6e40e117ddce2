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
  taskNotFound: (id: string) => `Task ${id} does not exist (or was purged after its retention).`,
  notPending: (id: string, status: string) =>
    `Task ${id} is ${status}: its priority can only change while it is PENDING_SUBMIT.`,
  staleLease: (id: string) =>
    `Task ${id} was changed by someone else (lease expired or fenced out); this write was rejected. The current holder or the recovery owns it now.`,
  deadlinePassed: (id: string, deadlineAt: number) =>
    `Task ${id} passed its deadline (${new Date(deadlineAt).toISOString()}): its handler was aborted and the task ends TIMED_OUT; a late result is discarded. Raise timeoutMs if the work needs longer.`,
  storeClosed: () => `The task store is closed. Create a new store or restart the application.`,
  shuttingDown: () => `The worker is shutting down and accepts no new work.`,
  idempotencyConflict: (key: string, fields: readonly string[]) =>
    `Idempotency key ${JSON.stringify(key)} already belongs to a task with another ${fields.join(' and ')}. Nothing was queued. A key names one operation: submit again with the same type, tenant and payload to get that task back, or use a new key for a different operation.`,
  scheduleModuleMissing: () =>
    `PriorityQueueModule workers need @nestjs/schedule: import ScheduleModule.forRoot() once in your root module (the library never imports it itself), or set workers: { enabled: false } in a producer-only process.`,
  unknownStoreType: (type: unknown) =>
    `Unknown store type ${String(type)}: use { type: 'memory' }, { type: 'redis', connection }, { type: 'typeorm', dataSource }, or pass a TaskStore instance.`,
  driverMissing: (driver: string, store: string) =>
    `The ${store} store needs the "${driver}" package: npm install ${driver}.`,
  invalidState: (id: string, status: string, operation: string) =>
    `Task ${id} is ${status}: ${operation} does not apply in that status. Nothing was changed.`,
  legacyKeySpace: (legacyBase: string, base: string) =>
    `This queue's Redis keys moved from ${legacyBase}* to ${base}* (the prefix and queue name are now escaped, so that no two prefix/queue pairs share keys), and ${legacyBase}* still holds a queue written by an earlier version. Drain it with that version and delete its keys, or rename them to the new names (docs/REDIS.md, "Upgrading a prefix or queue name with : or \\"). Nothing was changed.`,
  // TypeORM store
  unsupportedDriver: (type: string) =>
    `The TypeORM task store supports the DataSource types "postgres", "mysql", "mariadb", "better-sqlite3" and "sqlite", not "${type}".`,
  badTablePrefix: (prefix: string) =>
    `Invalid tablePrefix "${prefix}": use 1 to 31 letters, digits or underscores, starting with a letter or underscore.`,
  badQueue: (queue: string) => `Invalid queue "${queue}": use 1 to 64 printable characters.`,
  agingMismatch: (queue: string, stored: number, wanted: number) =>
    `Queue "${queue}" was created with agingIntervalMs = ${stored}, this store asks for ${wanted}. The order of every index depends on it: use the same value in every process, or a new queue name.`,
  dataSourceNotInitialized: () =>
    `The TypeORM DataSource is not initialized: call dataSource.initialize() (or let @nestjs/typeorm do it) before init() of the task store.`,
  schemaMissing: (table: string) =>
    `Table ${table} is missing. Run the task store's migrations (store.init() does it, or add priorityQueueMigrations() to your DataSource migrations).`,
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
