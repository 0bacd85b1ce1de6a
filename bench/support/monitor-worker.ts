/**
 * The worker process of bench/sleeping-monitors.ts: a process of its own, so that its RSS is the
 * worker's alone. Once ready it prints `ready <pid> <maxCachedWorkflows>`, then every second
 * `rss <bytes> heap <bytes> cached <workflows>` (RSS, V8 heap used, and the runs in the worker's
 * workflow cache). Environment: TEMPORAL_ADDRESS, KEEL_TASK_QUEUE, MODEL_SERVER_URL,
 * BENCH_MAX_CACHED (the workflow cache size; unset: the worker's default, which Temporal derives
 * from the heap limit), BENCH_FLOOR=1 (not keel: a plain Temporal worker of the floor, a workflow
 * that only waits on a timer, bench/timer-floor-workflow.ts, with every option at its default).
 */
import { fileURLToPath } from 'node:url';
import { DefaultLogger, NativeConnection, Runtime, Worker } from '@temporalio/worker';
import { defineAgent } from '../../src/core/define.js';
import { createWorker } from '../../src/worker.js';

Runtime.install({ logger: new DefaultLogger('ERROR') });

const server = process.env.MODEL_SERVER_URL;
const taskQueue = process.env.KEEL_TASK_QUEUE;
if (!server || !taskQueue) throw new Error('MODEL_SERVER_URL and KEEL_TASK_QUEUE must be set');
const maxCached = process.env.BENCH_MAX_CACHED ? { maxCachedWorkflows: Number(process.env.BENCH_MAX_CACHED) } : {};

/** No tools: the monitor adds its own (schedule_next_turn, report_done). Same definition as the benchmark's. */
export const sleeperAgent = defineAgent({
  name: 'bench-sleeper',
  instructions: 'Look, then decide when to look again.',
  model: 'openai:bench-sleeper',
});

async function start(): Promise<{ worker: Worker; run(): Promise<void> }> {
  if (process.env.BENCH_FLOOR === '1') {
    const connection = await NativeConnection.connect({ address: process.env.TEMPORAL_ADDRESS ?? 'localhost:7233' });
    const worker = await Worker.create({
      connection,
      taskQueue: taskQueue!,
      workflowsPath: fileURLToPath(new URL('../timer-floor-workflow.ts', import.meta.url)),
      ...maxCached,
    });
    return { worker, run: () => worker.run() };
  }
  const keel = await createWorker({
    agents: [sleeperAgent],
    taskQueue,
    providers: { openai: { apiKey: 'bench', baseURL: `${server}/v1` } },
    // A sleeping monitor needs nothing from the worker: past this many, the least recently used
    // runs are evicted, and a wake replays the run's history.
    workerOptions: { ...maxCached },
  });
  return keel;
}

const { worker, run } = await start();
const report = () => {
  const { rss, heapUsed } = process.memoryUsage();
  process.stdout.write(`rss ${rss} heap ${heapUsed} cached ${worker.getStatus().numCachedWorkflows}\n`);
};
const ticker = setInterval(report, 1000);
process.stdout.write(`ready ${process.pid} ${worker.options.maxCachedWorkflows}\n`);
report();
try {
  await run();
} finally {
  clearInterval(ticker);
}
