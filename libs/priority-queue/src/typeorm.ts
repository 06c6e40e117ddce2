/**
 * `nestjs-priority-queue/typeorm`: the TypeORM store (PostgreSQL, MySQL / MariaDB, SQLite).
 * A separate entry point so that the library root never loads typeorm.
 */
export * from './stores/typeorm';
