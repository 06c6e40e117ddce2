import type { NewTask } from '../../libs/priority-queue/src/core';

/**
 * A valid NewTask with neutral defaults (type 'job', provider 'p', no admission keys, due now,
 * no deadline, 5 attempts, idempotent); the id and payload are the caller's, `over` sets the rest.
 */
export function plainTask(over: Partial<NewTask> & Pick<NewTask, 'id' | 'payload'>): NewTask {
  return {
    idempotencyKey: null,
    type: 'job',
    priority: 0,
    providerKey: 'p',
    accountId: null,
    tenantId: null,
    concurrencyKey: null,
    delayMs: 0,
    timeoutMs: null,
    maxAttempts: 5,
    idempotent: true,
    ...over,
  };
}
