import { MemoryTaskStore } from 'nestjs-priority-queue';
import { dashboardApiSuite } from './support/dashboard-api.suite';

dashboardApiSuite('memory', async () => new MemoryTaskStore());
