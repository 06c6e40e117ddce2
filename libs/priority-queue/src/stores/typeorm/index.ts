export { TypeOrmTaskStore, type TypeOrmTaskStoreOptions } from './typeorm-task-store';
export { priorityQueueMigrations } from './schema/migrations';
export { tableNames, DEFAULT_TABLE_PREFIX, DEFAULT_QUEUE, type TableNames } from './names';
export { typeormStore, type TypeOrmStoreOptions, type TypeOrmStoreBackend } from './typeorm-store.factory';
export { PgEventTransport } from './event-transport';
