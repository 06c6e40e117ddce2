/**
 * Wake-up listeners of one queue in this process (the memory store's, the TypeORM store's
 * in-process wake-ups): notify() calls every listener once in the next event-loop turn, however
 * many writes asked for it in this one; a listener's error is its own.
 */
export class LocalWakes {
  private readonly listeners = new Set<() => void>();
  private pending = false;

  /** Adds a listener; returns its removal. */
  add(listener: () => void): () => void {
    const own = () => listener();
    this.listeners.add(own);
    return () => this.listeners.delete(own);
  }

  clear(): void {
    this.listeners.clear();
  }

  notify(): void {
    if (this.pending || this.listeners.size === 0) return;
    this.pending = true;
    setImmediate(() => {
      this.pending = false;
      for (const l of [...this.listeners]) {
        try {
          l();
        } catch {
          /* a listener's error is its own; the store goes on */
        }
      }
    });
  }
}
