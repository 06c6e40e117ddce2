import { Inject, Injectable } from '@nestjs/common';
import { IdempotencyConflictError, InjectTaskManager, TaskManager, type SubmitInput, type Task } from 'nestjs-priority-queue';
import { DEMO_CONFIG, type DemoConfig, type TenantConfig } from '../config/demo-config';
import { TaskTypes } from '../handlers/task-types';
import { MAINTENANCE_QUEUE, OCR_QUEUE } from '../queues/demo-queues';
import { resolvePriority } from '../priority/resolve-priority';
import { WorkKind } from '../priority/work-kind';
import type { DocumentPayload, ReindexPayload } from './document-payload';

export interface DocumentInput {
  name: string;
  pages?: number;
}

/**
 * Turns a request of an authenticated tenant into queue tasks. Priority, tenant, vendor and
 * vendor account are decided here, from the configuration; nothing comes from the client.
 */
@Injectable()
export class WorkSubmitter {
  constructor(
    /** Documents to the OCR vendors. */
    @InjectTaskManager(OCR_QUEUE) private readonly tasks: TaskManager,
    /** Re-index flows. */
    @InjectTaskManager(MAINTENANCE_QUEUE) private readonly maintenance: TaskManager,
    @Inject(DEMO_CONFIG) private readonly config: DemoConfig,
  ) {}

  /** One interactive upload. */
  submitDocument(tenant: TenantConfig, doc: DocumentInput): Promise<Task> {
    return this.tasks.submit(this.ocrTask(tenant, WorkKind.INTERACTIVE, doc));
  }

  /** Archive documents, all or none. `keys` (same length) makes a re-run of a batch idempotent. */
  submitArchive(tenant: TenantConfig, docs: readonly DocumentInput[], keys?: readonly string[]): Promise<Task[]> {
    return this.tasks.submitMany(
      docs.map((doc, i) => ({ ...this.ocrTask(tenant, WorkKind.BATCH_ARCHIVE, doc), idempotencyKey: keys?.[i] })),
    );
  }

  /**
   * Re-runs an incident's records; recovering the same incident twice returns the first task.
   * The key is per incident: a second request that names other records is a conflict of the key
   * (IdempotencyConflictError), answered here with the task that already recovers the incident.
   */
  async recoverIncident(tenant: TenantConfig, incidentId: string, records: string[]): Promise<Task> {
    const input = this.ocrTask(tenant, WorkKind.INCIDENT_RECOVERY, { name: `incident-${incidentId}`, pages: Math.max(1, records.length) });
    (input.payload as DocumentPayload).incidentId = incidentId;
    (input.payload as DocumentPayload).records = records;
    try {
      return await this.tasks.submit({ ...input, idempotencyKey: `incident:${tenant.id}:${incidentId}` });
    } catch (e) {
      const held = e instanceof IdempotencyConflictError ? await this.tasks.get(e.taskId) : null;
      if (held === null) throw e;
      return held;
    }
  }

  /** A re-index flow: one at a time per tenant (concurrencyKey `reindex:<tenantId>`). */
  reindex(tenant: TenantConfig, reason?: string): Promise<Task> {
    const payload: ReindexPayload = { tenantId: tenant.id, plan: tenant.plan, kind: WorkKind.REINDEX };
    if (reason !== undefined) payload.reason = reason; // payloads are JSON: no undefined values
    return this.maintenance.submit({
      type: TaskTypes.REINDEX_TENANT,
      payload,
      priority: resolvePriority(tenant.plan, WorkKind.REINDEX),
      tenantId: tenant.id,
      concurrencyKey: reindexKey(tenant.id),
    });
  }

  private ocrTask(tenant: TenantConfig, kind: WorkKind, doc: DocumentInput): SubmitInput<DocumentPayload> {
    const vendor = this.config.vendorByPlan[tenant.plan];
    return {
      type: TaskTypes.ocrOn(vendor),
      payload: { tenantId: tenant.id, plan: tenant.plan, kind, document: { name: doc.name, pages: doc.pages ?? 1 } },
      priority: resolvePriority(tenant.plan, kind),
      tenantId: tenant.id,
      accountId: tenant.vendorAccount,
    };
  }
}

export function reindexKey(tenantId: string): string {
  return `reindex:${tenantId}`;
}
