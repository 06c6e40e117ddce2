import type { DataSource, MigrationInterface } from 'typeorm';

/** Runs migration classes (priorityQueueMigrations) one by one, each on its own query runner. */
export async function runMigrations(dataSource: DataSource, classes: Array<new () => MigrationInterface>, direction: 'up' | 'down'): Promise<void> {
  for (const M of classes) {
    const qr = dataSource.createQueryRunner();
    try {
      await new M()[direction](qr);
    } finally {
      await qr.release();
    }
  }
}
