import { Logger } from '@nestjs/common';
import { loadDemoConfig } from './config/load-demo-config';
import { createDemoApp } from './create-demo-app';
import { describeStore } from './store/store-selection';

async function bootstrap(): Promise<void> {
  const config = loadDemoConfig(process.env);
  const demo = await createDemoApp(config);
  await demo.app.listen(config.port, '127.0.0.1');
  const logger = new Logger('Demo');
  logger.log(`listening on http://127.0.0.1:${config.port} with the ${describeStore(config.store)} store`);
  logger.log(`dashboard: http://127.0.0.1:${config.port}/dashboard/ (any user name, the admin key as the password)`);
  logger.log(`tenants: ${config.tenants.map((t) => `${t.id} (${t.plan}, x-api-key: ${t.apiKey})`).join(', ')}`);
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

void bootstrap();
