import { MemoryTaskStore } from 'nestjs-priority-queue';
import { dashboardApiSuite } from './support/dashboard-api.suite';

// the memory store keeps the last 20 transitions of each task by default
dashboardApiSuite('memory', async () => new MemoryTaskStore(), { history: true });
