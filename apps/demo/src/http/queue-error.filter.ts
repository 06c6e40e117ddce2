import { Catch, HttpStatus, type ArgumentsHost, type ExceptionFilter } from '@nestjs/common';
import { IdempotencyConflictError, InvalidStateError, NotSupportedByStoreError, PriorityQueueError, TaskNotFoundError, ValidationError } from 'nestjs-priority-queue';

interface JsonResponse {
  status(code: number): JsonResponse;
  json(body: unknown): void;
}

/**
 * The library's typed errors as HTTP answers: bad input 400, unknown task 404, wrong state, reused
 * idempotency key or a scheduling policy the store does not implement 409.
 */
@Catch(PriorityQueueError)
export class QueueErrorFilter implements ExceptionFilter {
  catch(error: PriorityQueueError, host: ArgumentsHost): void {
    const status =
      error instanceof ValidationError
        ? HttpStatus.BAD_REQUEST
        : error instanceof TaskNotFoundError
          ? HttpStatus.NOT_FOUND
          : error instanceof InvalidStateError || error instanceof IdempotencyConflictError || error instanceof NotSupportedByStoreError
            ? HttpStatus.CONFLICT
            : HttpStatus.INTERNAL_SERVER_ERROR;
    const details = error instanceof ValidationError ? error.details : undefined;
    host
      .switchToHttp()
      .getResponse<JsonResponse>()
      .status(status)
      .json({ statusCode: status, error: error.name, message: error.message, ...(details?.length ? { details } : {}) });
  }
}
