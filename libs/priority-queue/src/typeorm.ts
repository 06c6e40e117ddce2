/**
 * `nestjs-priority-queue/typeorm`: the TypeORM store (PostgreSQL, MySQL / MariaDB, SQLite).
 * A separate entry point so that the library root never loads typeorm.
 */
export { typeormStore, type TypeOrmStoreOptions, type TypeOrmStoreBackend } from './stores/typeorm/typeorm-store.factory';
export { TypeOrmTaskStore, type TypeOrmTaskStoreOptions } from './stores/typeorm/typeorm-task-store';
export { priorityQueueMigrations } from './stores/typeorm/schema/migrations';
