import type { INestApplication } from '@nestjs/common';
import { ForbiddenKeysPipe } from './http/forbidden-keys.pipe';
import { createRequestValidationPipe } from './http/request-validation.pipe';
import { QueueErrorFilter } from './http/queue-error.filter';

/** Global pipes (forbidden keys first, then validation) and filters, shared by main.ts and the e2e tests. */
export function configureApp(app: INestApplication): INestApplication {
  app.useGlobalPipes(new ForbiddenKeysPipe(), createRequestValidationPipe());
  app.useGlobalFilters(new QueueErrorFilter());
  return app;
}
