/** User-facing messages of the TypeORM store (same style as core/messages.ts). */
export const TypeOrmMessages = {
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
