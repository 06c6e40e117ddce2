export * from './task';
export * from './order-key';
export * from './admission';
export * from './errors';
export * from './messages';
export * from './handler';
export * from './task-store.port';
