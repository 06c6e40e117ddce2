import { Catch, HttpException, HttpStatus, type ArgumentsHost } from '@nestjs/common';
import { BaseExceptionFilter } from '@nestjs/core';
import { PriorityQueueError, ValidationError } from '../core/errors';

/** HTTP status of each error code (a ValidationError of any code is 400). */
const STATUS_BY_CODE: Record<string, number> = {
  TASK_NOT_FOUND: HttpStatus.NOT_FOUND,
  QUEUE_NOT_FOUND: HttpStatus.NOT_FOUND,
  INVALID_STATE: HttpStatus.CONFLICT,
  IDEMPOTENCY_CONFLICT: HttpStatus.CONFLICT,
  STALE_LEASE: HttpStatus.CONFLICT,
  STORE_CLOSED: HttpStatus.SERVICE_UNAVAILABLE,
  STORE_UNAVAILABLE: HttpStatus.SERVICE_UNAVAILABLE,
  WAIT_TIMEOUT: HttpStatus.GATEWAY_TIMEOUT,
};

/** The HTTP status the filter answers for a library error. */
export function httpStatusOf(error: PriorityQueueError): number {
  if (error instanceof ValidationError) return HttpStatus.BAD_REQUEST;
  return STATUS_BY_CODE[error.code] ?? HttpStatus.INTERNAL_SERVER_ERROR;
}

/**
 * Answers the library's errors with a status that says what happened instead of 500: validation
 * 400, not found 404, invalid state and idempotency conflict 409, store unavailable 503, waitFor
 * timeout 504. Body: `{ statusCode, error, code, message, details? }`. HTTP only; other errors
 * go to Nest's default handling.
 *
 * `app.useGlobalFilters(new PriorityQueueExceptionFilter(app.get(HttpAdapterHost).httpAdapter))`,
 * `{ provide: APP_FILTER, useClass: PriorityQueueExceptionFilter }` or `@UseFilters(...)`.
 */
@Catch(PriorityQueueError)
export class PriorityQueueExceptionFilter extends BaseExceptionFilter {
  override catch(exception: PriorityQueueError, host: ArgumentsHost): void {
    if (host.getType() !== 'http') throw exception;
    const status = httpStatusOf(exception);
    const body: Record<string, unknown> = {
      statusCode: status,
      error: HttpStatus[status]?.split('_').map((w) => w[0] + w.slice(1).toLowerCase()).join(' ') ?? 'Error',
      code: exception.code,
      message: exception.message,
    };
    if (exception instanceof ValidationError && exception.details.length > 0) body.details = exception.details;
    super.catch(new HttpException(body, status, { cause: exception }), host);
  }
}
