/**
 * What a piece of work is. The kind follows from the HTTP route (or the scheduled job) that
 * created it, never from a client field.
 */
export enum WorkKind {
  /** One document uploaded from the UI: a user is waiting. */
  INTERACTIVE = 'INTERACTIVE',
  /** Historic documents archived overnight: may go slowly. */
  BATCH_ARCHIVE = 'BATCH_ARCHIVE',
  /** Operators re-running failed business data. */
  INCIDENT_RECOVERY = 'INCIDENT_RECOVERY',
  /** A tenant's search index rebuilt (one flow per tenant at a time). */
  REINDEX = 'REINDEX',
}
