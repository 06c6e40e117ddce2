import type { INestApplication } from '@nestjs/common';
import { createRequestValidationPipe } from './http/request-validation.pipe';
import { QueueErrorFilter } from './http/queue-error.filter';

/** Global pipes and filters, shared by main.ts and the e2e tests. */
export function configureApp(app: INestApplication): INestApplication {
  app.useGlobalPipes(createRequestValidationPipe());
  app.useGlobalFilters(new QueueErrorFilter());
  return app;
}
