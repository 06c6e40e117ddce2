import type { CanActivate, ModuleMetadata, Type } from '@nestjs/common';
import { ValidationError } from '../core/errors';
import { Messages } from '../core/messages';
import { intOption } from '../core/validation';

/** Options of PriorityQueueDashboardModule.forRoot(). */
export interface PriorityQueueDashboardOptions {
  /** Where the page and its API are served, below the app's global prefix. Default 'dashboard'. */
  path?: string;
  /**
   * The app's access check (e.g. its admin auth guard): a CanActivate class (built by Nest in
   * this module, with `imports` for its dependencies) or an instance. Required unless both
   * `readOnly` and `unsafeNoAuth` are true.
   */
  guard?: CanActivate | Type<CanActivate>;
  /** Show everything, change nothing: every action is hidden and the API refuses changes (403). */
  readOnly?: boolean;
  /** Serve a read-only dashboard without any guard. Anyone who reaches the path sees every task. */
  unsafeNoAuth?: boolean;
  /** Modules the guard class needs (e.g. the module of the service it checks keys with). */
  imports?: ModuleMetadata['imports'];
  /** Title of the page. Default 'Priority queue'. */
  title?: string;
  /** Period of the live updates, in ms (500 to 60000). Default 2000. */
  refreshMs?: number;
}

export interface ResolvedDashboardOptions {
  path: string;
  guard: CanActivate | Type<CanActivate> | null;
  readOnly: boolean;
  title: string;
  refreshMs: number;
}

export const DASHBOARD_OPTIONS = Symbol('PRIORITY_QUEUE_DASHBOARD_OPTIONS');

const SEGMENT = /^[A-Za-z0-9._-]+$/;

/** Checks the options once, at forRoot(): a dashboard without a guard refuses to start. */
export function resolveDashboardOptions(options: PriorityQueueDashboardOptions): ResolvedDashboardOptions {
  const o = options ?? {};
  const path = (o.path ?? 'dashboard').replace(/^\/+|\/+$/g, '');
  if (typeof o.path !== 'undefined' && typeof o.path !== 'string') throw new ValidationError(Messages.dashboardBadPath(o.path));
  if (!path || !path.split('/').every((s) => SEGMENT.test(s) && s !== '.' && s !== '..')) {
    throw new ValidationError(Messages.dashboardBadPath(o.path));
  }
  const guard = o.guard ?? null;
  if (guard === null && !(o.readOnly === true && o.unsafeNoAuth === true)) throw new ValidationError(Messages.dashboardNoAuth());
  if (guard !== null && typeof guard !== 'function' && typeof (guard as CanActivate).canActivate !== 'function') {
    throw new ValidationError(Messages.invalidOption('guard', guard, 'a CanActivate class or instance'));
  }
  const refreshMs = intOption('refreshMs', o.refreshMs, 2000, 500, 60_000);
  return { path, guard, readOnly: o.readOnly === true, title: o.title ?? 'Priority queue', refreshMs };
}
