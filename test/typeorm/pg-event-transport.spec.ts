/**
 * The PostgreSQL event transport (stores/typeorm/event-transport.ts): a burst of publishes made
 * while a NOTIFY is in flight goes out together in the next, in publish order, so a listener in
 * another process sees each task's transitions in the order this process made them, and a burst
 * costs a few NOTIFYs, not one per publish.
 */
import { TaskStatus } from '../../libs/priority-queue/src/core';
import type { TransitionMessage } from '../../libs/priority-queue/src/core/event-transport.port';
import { PgEventTransport } from '../../libs/priority-queue/src/stores/typeorm/event-transport';
import { openDatabase, type OpenDatabase } from './typeorm-dialects';

jest.setTimeout(120_000);

let db: OpenDatabase;
beforeAll(async () => {
  db = await openDatabase('postgres');
});
afterAll(() => db?.close());

const ORDER = [TaskStatus.PENDING_SUBMIT, TaskStatus.SUBMITTING, TaskStatus.RUNNING, TaskStatus.SUCCEEDED] as const;

function transition(taskId: string, k: number): TransitionMessage {
  return { taskId, type: 'job', from: k === 0 ? null : ORDER[k - 1], to: ORDER[k], at: 1_000 + k, error: null };
}

describe('PgEventTransport', () => {
  it('sends a burst of publishes in publish order, in a few NOTIFYs', async () => {
    const channel = 'pq_test_events_burst';
    const listener = new PgEventTransport(db.dataSource, channel);
    const got: TransitionMessage[] = [];
    const tasks = 150;
    const all = tasks * ORDER.length;
    let arrived!: () => void;
    const done = new Promise<void>((r) => (arrived = r));
    const unsubscribe = await listener.subscribe({
      onMessages: (m) => {
        got.push(...m);
        if (got.length >= all) arrived();
      },
    });
    // the publisher counts its NOTIFYs on its own DataSource handle
    let notifies = 0;
    const counted = new Proxy(db.dataSource, {
      get(target, prop, receiver) {
        const v = Reflect.get(target, prop, receiver);
        if (prop !== 'query') return typeof v === 'function' ? v.bind(target) : v;
        return (text: string, params?: unknown[]) => {
          if (/pg_notify/.test(text)) notifies++;
          return (v as (t: string, p?: unknown[]) => Promise<unknown>).call(target, text, params);
        };
      },
    });
    const publisher = new PgEventTransport(counted, channel);
    // each task's four transitions published one at a time, tasks interleaved: 600 publishes
    const sent: TransitionMessage[] = [];
    const publishes: Array<Promise<void>> = [];
    for (let k = 0; k < ORDER.length; k++) {
      for (let t = 0; t < tasks; t++) {
        const m = transition(`task-${t}`, k);
        sent.push(m);
        publishes.push(publisher.publish([m]));
      }
    }
    await Promise.all(publishes);
    await done;
    await unsubscribe();
    expect(got.map((m) => `${m.taskId}:${m.to}`)).toEqual(sent.map((m) => `${m.taskId}:${m.to}`));
    // before: one NOTIFY per publish (600); now the first alone, the other 599 as their size needs
    expect(notifies).toBeLessThanOrEqual(10);
  });

  it('answers every publish of a batch whose NOTIFY failed with the error, and goes on with the next', async () => {
    let fail = true;
    const flaky = new Proxy(db.dataSource, {
      get(target, prop, receiver) {
        const v = Reflect.get(target, prop, receiver);
        if (prop !== 'query') return typeof v === 'function' ? v.bind(target) : v;
        return async (text: string, params?: unknown[]) => {
          if (fail) {
            fail = false;
            throw new Error('connection lost');
          }
          return (v as (t: string, p?: unknown[]) => Promise<unknown>).call(target, text, params);
        };
      },
    });
    const publisher = new PgEventTransport(flaky, 'pq_test_events_flaky');
    const first = publisher.publish([transition('a', 0)]);
    const second = publisher.publish([transition('a', 1)]);
    await expect(first).rejects.toThrow('connection lost');
    await expect(second).resolves.toBeUndefined();
  });
});
