import { Logger, type INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { AppModule } from './app.module';
import type { DemoConfig } from './config/demo-config';
import { configureApp } from './configure-app';
import { openStoreConnection } from './store/store-connection';

export interface DemoApp {
  app: INestApplication;
  /** Closes the application (workers stop gracefully), then the store connection. */
  close(): Promise<void>;
}

/** Opens the store PQ_STORE selected and builds the application on it (not listening yet). */
export async function createDemoApp(config: DemoConfig, options: { logger?: false } = {}): Promise<DemoApp> {
  const storeLogger = new Logger('Store');
  const connection = await openStoreConnection(config.store, { log: options.logger === false ? undefined : (m) => storeLogger.log(m) });
  try {
    const app = configureApp(await NestFactory.create(AppModule.forRoot(config, connection.config), { logger: options.logger }));
    let closed = false;
    return {
      app,
      async close() {
        if (closed) return;
        closed = true;
        try {
          await app.close();
        } finally {
          await connection.close();
        }
      },
    };
  } catch (e) {
    await connection.close();
    throw e;
  }
}
