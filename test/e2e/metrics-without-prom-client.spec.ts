import { Test } from '@nestjs/testing';

/**
 * `metrics: true` in an app without the optional prom-client: start-up fails with the library's
 * own message (what to install), not Node's "Cannot find module". prom-client is made
 * unresolvable for this file only.
 */
jest.doMock('prom-client', () => {
  throw Object.assign(new Error("Cannot find module 'prom-client' from 'priority-queue.metrics.ts'"), { code: 'MODULE_NOT_FOUND' });
});

describe('metrics without prom-client installed', () => {
  it('fails start-up with "npm install prom-client"', async () => {
    const { PriorityQueueModule, ConfigurationError } = await import('nestjs-priority-queue');
    const ref = await Test.createTestingModule({ imports: [PriorityQueueModule.forRoot({ metrics: true, workers: { enabled: false }, logLevel: 'off' })] }).compile();
    const err = await ref.init().catch((e: unknown) => e);
    await ref.close().catch(() => undefined);
    expect(err).toBeInstanceOf(ConfigurationError);
    expect((err as Error).message).toBe(
      'PriorityQueueModule option metrics needs the optional package "prom-client": npm install prom-client (or remove the metrics option).',
    );
  });

  it('an app without metrics never loads it', async () => {
    const { PriorityQueueModule, TaskManager } = await import('nestjs-priority-queue');
    const ref = await Test.createTestingModule({ imports: [PriorityQueueModule.forRoot({ workers: { enabled: false }, taskTypes: [{ type: 't' }], logLevel: 'off' })] }).compile();
    await ref.init();
    await ref.get(TaskManager).submit({ type: 't' });
    await ref.close();
  });
});
