import { Catch, HttpException, HttpStatus, Logger, type ArgumentsHost, type ExceptionFilter } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { InvalidStateError, QueueNotFoundError, ReadOnlyError, StaleLeaseError, TaskNotFoundError, ValidationError } from '../core/errors';

/** The HTTP status of each typed error of the library; anything else is a 500 without details. */
function statusOf(e: unknown): number {
  // a queue name in the URL that no queue has is bad input of this API
  if (e instanceof ValidationError || e instanceof QueueNotFoundError) return HttpStatus.BAD_REQUEST;
  if (e instanceof TaskNotFoundError) return HttpStatus.NOT_FOUND;
  if (e instanceof ReadOnlyError) return HttpStatus.FORBIDDEN;
  if (e instanceof InvalidStateError || e instanceof StaleLeaseError) return HttpStatus.CONFLICT;
  return HttpStatus.INTERNAL_SERVER_ERROR;
}

/**
 * Answers every failed dashboard request with `{ statusCode, error, message, details? }`: the
 * message of the library's typed error (core/messages.ts), or of the HttpException the app's
 * guard threw. Works on any Nest HTTP platform (it replies through the HttpAdapter).
 */
@Catch()
export class DashboardErrorFilter implements ExceptionFilter {
  private readonly logger = new Logger('PriorityQueueDashboard');

  constructor(private readonly adapterHost: HttpAdapterHost) {}

  catch(exception: unknown, host: ArgumentsHost): void {
    const http = this.adapterHost.httpAdapter;
    const res = host.switchToHttp().getResponse();
    if (exception instanceof HttpException) {
      const r = exception.getResponse();
      const body = typeof r === 'object' && r !== null ? r : { statusCode: exception.getStatus(), message: r };
      http.reply(res, body, exception.getStatus());
      return;
    }
    const status = statusOf(exception);
    if (status === HttpStatus.INTERNAL_SERVER_ERROR) {
      this.logger.error(exception instanceof Error ? exception.stack ?? exception.message : String(exception));
      http.reply(res, { statusCode: status, error: 'InternalError', message: 'The dashboard request failed; see the application log.' }, status);
      return;
    }
    const e = exception as Error & { details?: readonly string[] };
    http.reply(res, { statusCode: status, error: e.name, message: e.message, ...(e.details?.length ? { details: e.details } : {}) }, status);
  }
}
