import { Inject } from '@nestjs/common';
import { getAdmissionGuardToken, getTaskManagerToken, getTaskStoreToken } from './queue-tokens';

/** Injects the TaskManager of a queue: `@InjectTaskManager('reports') reports: TaskManager`. No name: the default queue. */
export const InjectTaskManager = (name?: string): PropertyDecorator & ParameterDecorator => Inject(getTaskManagerToken(name));

/** Injects the AdmissionGuard of a queue (its limits). No name: the default queue. */
export const InjectAdmissionGuard = (name?: string): PropertyDecorator & ParameterDecorator => Inject(getAdmissionGuardToken(name));

/** Injects the TaskStore of a queue. No name: the default queue. */
export const InjectTaskStore = (name?: string): PropertyDecorator & ParameterDecorator => Inject(getTaskStoreToken(name));
