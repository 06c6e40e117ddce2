import { Logger } from '@nestjs/common';
import { loadDemoConfig } from './config/load-demo-config';
import { createDemoApp } from './create-demo-app';
import { describeStore } from './store/store-selection';

const logger = new Logger('Demo');

async function bootstrap(): Promise<void> {
  const config = loadDemoConfig(process.env);
  const demo = await createDemoApp(config);
  await demo.app.listen(config.port, '127.0.0.1');
  const url = await demo.app.getUrl();
  logger.log(`listening on ${url} with the ${describeStore(config.store)} store`);
  logger.log(`dashboard: ${url}/dashboard/ (any user name, the admin key as the password)`);
  logger.log(`tenants: ${config.tenants.map((t) => `${t.id} (${t.plan}, x-api-key: ${t.apiKey})`).join(', ')}`);
  if (config.adminKeyGenerated) {
    logger.log(`admin routes: x-admin-key: ${config.adminKey} (generated for this run; set DEMO_ADMIN_KEY to choose it)`);
  } else {
    logger.log('admin routes: x-admin-key from DEMO_ADMIN_KEY');
  }
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      logger.log(`${signal}: stopping workers and closing the store`);
      demo.close().then(
        () => process.exit(0),
        (e) => {
          logger.error(e);
          process.exit(1);
        },
      );
    });
  }
}

bootstrap().catch((e: unknown) => {
  logger.error(`cannot start: ${e instanceof Error ? e.message : String(e)}`);
  process.exit(1);
});
