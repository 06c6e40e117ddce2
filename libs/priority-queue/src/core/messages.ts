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
  invalidPriority: (value: unknown) =>
    `Invalid priority ${String(value)}: use an integer from -2147483648 to 2147483647 (larger = more urgent).`,
  invalidLimit: (what: string, value: unknown, expected: string) =>
    `Invalid limit ${what} = ${String(value)}: expected ${expected}. Limits were not changed.`,
  invalidOption: (what: string, value: unknown, expected: string) =>
    `Invalid option ${what} = ${String(value)}: expected ${expected}.`,
  taskNotFound: (id: string) => `Task ${id} does not exist (or was purged after its retention).`,
  notPending: (id: string, status: string) =>
    `Task ${id} is ${status}: its priority can only change while it is PENDING_SUBMIT.`,
  staleLease: (id: string) =>
    `Task ${id} was changed by someone else (lease expired or fenced out); this write was rejected. The current holder or the recovery owns it now.`,
  storeClosed: () => `The task store is closed. Create a new store or restart the application.`,
  shuttingDown: () => `The worker is shutting down and accepts no new work.`,
  idempotencyConflict: (key: string, existingType: string, type: string) =>
    `Idempotency key "${key}" already belongs to a task of type "${existingType}", not "${type}". Use a key unique per logical operation.`,
  scheduleModuleMissing: () =>
    `PriorityQueueModule workers need @nestjs/schedule: import ScheduleModule.forRoot() once in your root module (the library never imports it itself), or set workers: { enabled: false } in a producer-only process.`,
  unknownStoreType: (type: unknown) =>
    `Unknown store type ${String(type)}: use { type: 'memory' }, { type: 'redis', connection }, { type: 'typeorm', dataSource }, or pass a TaskStore instance.`,
  driverMissing: (driver: string, store: string) =>
    `The ${store} store needs the "${driver}" package: npm install ${driver}.`,
  invalidState: (id: string, status: string, operation: string) =>
    `Task ${id} is ${status}: ${operation} does not apply in that status. Nothing was changed.`,
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
