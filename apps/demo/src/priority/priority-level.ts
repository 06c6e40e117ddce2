/** The fixed priority levels of the demo. Larger runs first (DESIGN §2). */
export enum PriorityLevel {
  BATCH = -100,
  NORMAL = 0,
  HIGH = 100,
  URGENT = 1000,
}

/** The level name of a priority value, for stats and logs ("HIGH", or the number itself). */
export function priorityLevelName(priority: number): string {
  return PriorityLevel[priority] ?? String(priority);
}
