/**
 * `nestjs-priority-queue/typeorm`: the TypeORM store (PostgreSQL, MySQL / MariaDB, SQLite).
 * A separate entry point so that the library root never loads typeorm.
 */
export { TypeOrmTaskStore, type TypeOrmTaskStoreOptions } from './stores/typeorm/typeorm-task-store';
export { priorityQueueMigrations } from './stores/typeorm/schema/migrations';
