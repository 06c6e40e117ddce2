import { Inject } from '@nestjs/common';
import { PRIORITY_QUEUE_STORE } from './priority-queue.constants';

/** Injects the active TaskStore. */
export const InjectTaskStore = (): ParameterDecorator & PropertyDecorator => Inject(PRIORITY_QUEUE_STORE);
