/**
 * The worker process of bench/approvals.ts: a process of its own, so that its RSS is the
 * worker's alone. It talks to the benchmark over Node's IPC channel:
 *   { type: 'ready' }                                   once polling
 *   { type: 'sample', rss, heap, cached, hits, misses } every second (RSS, main-thread V8 heap, runs in the workflow cache,
 *                                                       and the worker's sticky cache hits and misses so far: a miss is a
 *                                                       workflow task for a run no longer in the cache, which is replayed)
 *   { type: 'tool', workflowId, at }                    when a tool (or the floor's tool activity) starts; `at` in
 *                                                       ms on this process's clock (performance.timeOrigin + now())
 *   { type: 'pong', id, at }                            the answer to { type: 'ping', id }, to line up the two clocks
 * It samples at once on { type: 'sample' }, and collects the main thread's garbage first on { type: 'gc' }
 * (node --expose-gc).
 * Environment: TEMPORAL_ADDRESS, KEEL_TASK_QUEUE, MODEL_SERVER_URL, BENCH_ARM (`keel` or `floor`),
 * BENCH_MAX_CACHED (the workflow cache size).
 */
import { DefaultLogger, MetricsBuffer, NativeConnection, Runtime, Worker } from '@temporalio/worker';
import { Context } from '@temporalio/activity';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { defineAgent, defineTool } from '../../src/core/define.js';
import { createWorker } from '../../src/worker.js';
import type { ApprovalFloorActivities } from '../approval-floor-workflow.js';

const metrics = new MetricsBuffer({ maxBufferSize: 100_000 });
Runtime.install({ logger: new DefaultLogger('ERROR'), telemetryOptions: { metrics: { buffer: metrics } } });

const { MODEL_SERVER_URL: server, KEEL_TASK_QUEUE: taskQueue, TEMPORAL_ADDRESS: address, BENCH_ARM: arm } = process.env;
if (!server || !taskQueue || !address || (arm !== 'keel' && arm !== 'floor') || !process.send) {
  throw new Error('MODEL_SERVER_URL, KEEL_TASK_QUEUE, TEMPORAL_ADDRESS and BENCH_ARM (keel or floor) must be set, and an IPC channel open');
}
const maxCachedWorkflows = Number(process.env.BENCH_MAX_CACHED ?? 100);

const now = () => performance.timeOrigin + performance.now();
const send = (message: object) => process.send!(message);

/** The guarded tool: every call waits for a person; when it runs, it says so. */
const guardedStep = defineTool({
  name: 'guarded_step',
  description: 'A step that a person must approve.',
  input: z.object({ run: z.number() }),
  requiresApproval: true,
  execute: (_args, ctx) => {
    send({ type: 'tool', workflowId: ctx.workflowId, at: now() });
    return 'done';
  },
});

/** Same definition as the benchmark's (it starts runs by name). */
export const approvalAgent = defineAgent({
  name: 'bench-approvals',
  instructions: 'Do the step once a person allows it, then answer.',
  model: 'openai:bench-approvals',
  tools: [guardedStep],
});

let worker: Worker;
if (arm === 'keel') {
  const keel = await createWorker({
    agents: [approvalAgent],
    taskQueue,
    providers: { openai: { apiKey: 'bench', baseURL: `${server}/v1` } },
    workerOptions: { maxCachedWorkflows },
  });
  worker = keel.worker;
} else {
  const activities: ApprovalFloorActivities = {
    async model() {},
    async tool() {
      send({ type: 'tool', workflowId: Context.current().info.workflowExecution?.workflowId ?? '', at: now() });
      return 'done';
    },
  };
  worker = await Worker.create({
    connection: await NativeConnection.connect({ address }),
    namespace: 'default',
    taskQueue,
    workflowsPath: fileURLToPath(new URL('../approval-floor-workflow.ts', import.meta.url)),
    activities,
    maxCachedWorkflows,
  });
}

/** Sticky cache hits and misses so far (Temporal's worker metrics, counters: each update is a delta). */
const cache = { hits: 0, misses: 0 };
const sample = () => {
  for (const update of metrics.retrieveUpdates()) {
    if (update.metric.name.endsWith('sticky_cache_hit')) cache.hits += update.value;
    else if (update.metric.name.endsWith('sticky_cache_miss')) cache.misses += update.value;
  }
  const { rss, heapUsed } = process.memoryUsage();
  send({ type: 'sample', rss, heap: heapUsed, cached: worker.getStatus().numCachedWorkflows, ...cache });
};
process.on('message', (message: { type?: string; id?: number }) => {
  if (message.type === 'ping') send({ type: 'pong', id: message.id, at: now() });
  else if (message.type === 'sample') sample();
  else if (message.type === 'gc') {
    (globalThis as { gc?: () => void }).gc?.();
    sample();
  }
});
// The benchmark going away (IPC closed) ends the worker too.
process.on('disconnect', () => {
  if (worker.getState() === 'RUNNING') worker.shutdown();
});
const ticker = setInterval(sample, 1000);
send({ type: 'ready' });
sample();
try {
  await worker.run();
} finally {
  clearInterval(ticker);
  process.disconnect?.();
}
