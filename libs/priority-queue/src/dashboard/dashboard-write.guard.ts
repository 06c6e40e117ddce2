import { ForbiddenException, type CanActivate, type ExecutionContext } from '@nestjs/common';
import { ReadOnlyError } from '../core/errors';
import { Messages } from '../core/messages';

/** The header every change must carry; a cross-site form or image request cannot set it. */
export const DASHBOARD_WRITE_HEADER = 'x-priority-queue-dashboard';

/**
 * Runs after the app's guard on every route that changes something: refuses all of them when
 * the dashboard is read-only (403), and any request without the dashboard's own header (403).
 */
export class DashboardWriteGuard implements CanActivate {
  constructor(private readonly readOnly: boolean) {}

  canActivate(context: ExecutionContext): boolean {
    if (this.readOnly) throw new ReadOnlyError();
    const headers = context.switchToHttp().getRequest<{ headers: Record<string, string | string[] | undefined> }>().headers;
    if (headers[DASHBOARD_WRITE_HEADER] !== '1') throw new ForbiddenException(Messages.dashboardNeedsHeader(DASHBOARD_WRITE_HEADER));
    return true;
  }
}
