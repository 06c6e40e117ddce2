import { Body, Controller, Post } from '@nestjs/common';
import { APP_FILTER } from '@nestjs/core';
import { PriorityQueueExceptionFilter, TaskManager } from 'nestjs-priority-queue';
import { expectJson, type CompatStep } from '../step.js';

@Controller('compat')
export class SubmitController {
  constructor(private readonly tasks: TaskManager) {}

  @Post('submit')
  submit(@Body() body: { priority: unknown }) {
    return this.tasks.submit({ type: 'compat.echo', payload: { text: 'x' }, priority: body.priority as number });
  }
}

/** PriorityQueueExceptionFilter over real HTTP: a bad submit is a 400 with the error's code, not a 500. */
export const exceptionFilter: CompatStep = {
  name: 'exception filter over HTTP',
  controllers: [SubmitController],
  providers: [{ provide: APP_FILTER, useClass: PriorityQueueExceptionFilter }],
  async run(_app, { baseUrl }) {
    const res = await fetch(`${baseUrl}/compat/submit`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ priority: 'high' }),
    });
    const body = (await res.json()) as { statusCode: number; code: string };
    expectJson([res.status, body.statusCode, body.code], [400, 400, 'VALIDATION'], 'a submit with a string priority');
  },
};
