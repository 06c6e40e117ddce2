import { Plan } from '../../apps/demo/src/priority/plan';
import { PriorityLevel } from '../../apps/demo/src/priority/priority-level';
import { resolvePriority } from '../../apps/demo/src/priority/resolve-priority';
import { WorkKind } from '../../apps/demo/src/priority/work-kind';

describe('resolvePriority(plan, kind)', () => {
  it('uses the fixed levels', () => {
    expect([PriorityLevel.BATCH, PriorityLevel.NORMAL, PriorityLevel.HIGH, PriorityLevel.URGENT]).toEqual([-100, 0, 100, 1000]);
  });

  const cases: Array<[Plan, WorkKind, PriorityLevel]> = [
    [Plan.FREE, WorkKind.INCIDENT_RECOVERY, PriorityLevel.URGENT],
    [Plan.ENTERPRISE, WorkKind.INCIDENT_RECOVERY, PriorityLevel.URGENT],
    [Plan.ENTERPRISE, WorkKind.INTERACTIVE, PriorityLevel.HIGH],
    [Plan.ENTERPRISE, WorkKind.REINDEX, PriorityLevel.HIGH],
    [Plan.ENTERPRISE, WorkKind.BATCH_ARCHIVE, PriorityLevel.BATCH],
    [Plan.PRO, WorkKind.BATCH_ARCHIVE, PriorityLevel.BATCH],
    [Plan.FREE, WorkKind.BATCH_ARCHIVE, PriorityLevel.BATCH],
    [Plan.PRO, WorkKind.INTERACTIVE, PriorityLevel.NORMAL],
    [Plan.FREE, WorkKind.INTERACTIVE, PriorityLevel.NORMAL],
    [Plan.FREE, WorkKind.REINDEX, PriorityLevel.NORMAL],
  ];
  it.each(cases)('%s + %s -> %s', (plan, kind, level) => {
    expect(resolvePriority(plan, kind)).toBe(level);
  });

  it('ranks incident > enterprise interactive > other interactive > archive for every plan', () => {
    for (const plan of Object.values(Plan)) {
      const incident = resolvePriority(plan, WorkKind.INCIDENT_RECOVERY);
      const interactive = resolvePriority(plan, WorkKind.INTERACTIVE);
      const archive = resolvePriority(plan, WorkKind.BATCH_ARCHIVE);
      expect(incident).toBeGreaterThan(interactive);
      expect(interactive).toBeGreaterThan(archive);
    }
    expect(resolvePriority(Plan.ENTERPRISE, WorkKind.INTERACTIVE)).toBeGreaterThan(resolvePriority(Plan.FREE, WorkKind.INTERACTIVE));
  });
});
