import type { Task } from './task';
import type { ClaimRequest, CompleteAnswer, CompleteAndClaimResult, CompleteCall, TaskStore } from './task-store.port';

/**
 * TaskStore.completeAndClaim as the calls it stands for: each complete() in order, each answer
 * (or error) kept, then claimSubmissions(). The memory store's implementation (no I/O: the calls
 * run back to back) and the fallback of a store for a batch its one-round-trip form does not
 * cover.
 */
export async function completeThenClaim(
  store: Pick<TaskStore, 'complete' | 'claimSubmissions'>,
  completes: readonly CompleteCall[],
  claim: ClaimRequest,
): Promise<CompleteAndClaimResult> {
  const completed = await Promise.all(completes.map((c) => answerOf(store.complete(c.fence, c.outcome))));
  return { completed, claim: await store.claimSubmissions(claim) };
}

/** A complete()'s promise as its answer: the task, or the error it was refused with. */
export function answerOf(p: Promise<Task>): Promise<CompleteAnswer> {
  return p.then(
    (task) => ({ task }),
    (e: unknown) => ({ error: e instanceof Error ? e : new Error(String(e)) }),
  );
}
