/**
 * A worker process for bench/resume-after-kill.ts, killed with SIGKILL in the middle of calls.
 * It tells the benchmark, on stdout, when a tool attempt starts; its model requests carry its pid
 * as the API key, so the model server tells which worker made each. Environment:
 * TEMPORAL_ADDRESS, KEEL_TASK_QUEUE, MODEL_SERVER_URL.
 */
import { Context } from '@temporalio/activity';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { z } from 'zod';
import { defineAgent, defineTool } from '../../src/core/define.js';
import { createWorker } from '../../src/worker.js';

Runtime.install({ logger: new DefaultLogger('ERROR') });

const server = process.env.MODEL_SERVER_URL;
if (!server || !process.env.KEEL_TASK_QUEUE) throw new Error('MODEL_SERVER_URL and KEEL_TASK_QUEUE must be set');

/** Its first attempt runs until the worker is killed; a retried attempt returns at once. */
const slowStep = defineTool({
  name: 'slow_step',
  description: 'A long step.',
  input: z.object({}),
  timeout: '5 minutes',
  execute: async (_args, ctx) => {
    const attempt = Context.current().info.attempt;
    process.stdout.write(`tool-start ${process.pid} ${ctx.workflowId} ${attempt}\n`);
    if (attempt === 1) await new Promise((resolve) => setTimeout(resolve, 300_000));
    return 'done';
  },
});

export const killAgent = defineAgent({
  name: 'kill-bench',
  instructions: 'Do the step.',
  model: 'openai:kill-bench',
  tools: [slowStep],
  modelSettings: { timeoutMs: 300_000 },
});

const worker = await createWorker({
  agents: [killAgent],
  taskQueue: process.env.KEEL_TASK_QUEUE,
  providers: { openai: { apiKey: `pid-${process.pid}`, baseURL: `${server}/v1` } },
  // Temporal's default sticky queue timeout (10 s), as a user's worker has: the server waits that
  // long for the dead worker's sticky queue before another worker may take the run's next task.
});
process.stdout.write(`worker ready ${process.pid}\n`);
await worker.run();
