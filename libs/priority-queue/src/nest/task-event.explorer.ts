import { Injectable, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { DiscoveryService, MetadataScanner, Reflector } from '@nestjs/core';
import { matchesEventName, taskEventName } from '../core/event-names';
import { ConfigurationError } from '../core/errors';
import { Messages } from '../core/messages';
import type { ClusterTaskEvent, OnTaskEventMetadata, QueueTaskEvent } from './on-task-event.decorator';
import { ON_TASK_EVENT_METADATA } from './priority-queue.constants';
import { PriorityQueueRegistry } from './priority-queue.registry';

/**
 * Finds every @OnTaskEvent method on the application's providers at start-up and subscribes it:
 * `local` methods to the TaskEvents of their queues, `cluster` methods to the queues' event
 * transports (one subscription per queue, shared). Unsubscribes at shutdown.
 */
@Injectable()
export class TaskEventExplorer implements OnModuleInit, OnApplicationShutdown {
  private readonly offs: Array<() => void> = [];
  private explored = false;

  constructor(
    private readonly discovery: DiscoveryService,
    private readonly scanner: MetadataScanner,
    private readonly reflector: Reflector,
    private readonly queues: PriorityQueueRegistry,
  ) {}

  async onModuleInit(): Promise<void> {
    if (this.explored) return;
    this.explored = true;
    const subscriptions: Array<Promise<void>> = [];
    for (const wrapper of this.discovery.getProviders()) {
      const { instance } = wrapper;
      if (!instance || typeof instance !== 'object') continue;
      const proto = Object.getPrototypeOf(instance) as object | null;
      if (!proto) continue;
      for (const key of this.scanner.getAllMethodNames(proto)) {
        const method = (instance as Record<string, unknown>)[key];
        if (typeof method !== 'function') continue;
        const meta = this.reflector.get<OnTaskEventMetadata | undefined>(ON_TASK_EVENT_METADATA, method);
        if (!meta) continue;
        const where = `@OnTaskEvent on ${instance.constructor?.name ?? 'a provider'}.${key}`;
        if (!wrapper.isDependencyTreeStatic()) {
          this.queues.log.warn(`${where} ignored: the provider is request-scoped (event handlers need a static provider)`);
          continue;
        }
        const call = (event: QueueTaskEvent | ClusterTaskEvent) => {
          try {
            const out = (method as (e: unknown) => unknown).call(instance, event);
            if (out instanceof Promise) out.catch((e: unknown) => this.failed(where, e));
          } catch (e) {
            this.failed(where, e);
          }
        };
        subscriptions.push(...this.subscribe(meta, where, call));
      }
    }
    await Promise.all(subscriptions);
  }

  onApplicationShutdown(): void {
    for (const off of this.offs.splice(0)) off();
  }

  private subscribe(meta: OnTaskEventMetadata, where: string, call: (e: QueueTaskEvent | ClusterTaskEvent) => void): Array<Promise<void>> {
    for (const q of meta.queues ?? []) if (!this.queues.has(q)) throw new ConfigurationError(Messages.queueNotRegistered(q, where));
    const handles = meta.queues ? meta.queues.map((q) => this.queues.handle(q)) : this.queues.handles();
    const types = meta.types ? new Set(meta.types) : null;
    const out: Array<Promise<void>> = [];
    for (const h of handles) {
      const queue = h.name;
      if (meta.scope === 'local') {
        this.offs.push(
          h.events.on((e) => {
            const boosted = e.boostedFrom !== undefined;
            if ((types && !types.has(e.type)) || !matchesEventName(meta.events, e.from, e.to, boosted)) return;
            call({ ...e, queue, name: taskEventName(e.from, e.to, boosted) });
          }),
        );
        continue;
      }
      out.push(
        h.hub
          .subscribe({
            onMessages: (messages) => {
              for (const m of messages) {
                const boosted = m.boostedFrom !== undefined;
                if ((types && !types.has(m.type)) || !matchesEventName(meta.events, m.from, m.to, boosted)) continue;
                call({ ...m, queue, name: taskEventName(m.from, m.to, boosted) });
              }
            },
          })
          .then((off) => void this.offs.push(off)),
      );
    }
    return out;
  }

  private failed(where: string, e: unknown): void {
    this.queues.log.error(`${where} failed: ${e instanceof Error ? e.message : String(e)}`, e instanceof Error ? e.stack : undefined);
  }
}
