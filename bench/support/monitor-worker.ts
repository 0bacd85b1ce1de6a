/**
 * The worker process of bench/sleeping-monitors.ts: a process of its own, so that its RSS is the
 * worker's alone. Once ready it prints `ready <pid>`, then every second
 * `rss <bytes> heap <bytes> cached <workflows>` (RSS, V8 heap used, and the runs in the worker's
 * workflow cache). Environment: TEMPORAL_ADDRESS, KEEL_TASK_QUEUE, MODEL_SERVER_URL,
 * BENCH_MAX_CACHED (the workflow cache size, default 1000).
 */
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { defineAgent } from '../../src/core/define.js';
import { createWorker } from '../../src/worker.js';

Runtime.install({ logger: new DefaultLogger('ERROR') });

const server = process.env.MODEL_SERVER_URL;
if (!server || !process.env.KEEL_TASK_QUEUE) throw new Error('MODEL_SERVER_URL and KEEL_TASK_QUEUE must be set');

/** No tools: the monitor adds its own (schedule_next_turn, report_done). Same definition as the benchmark's. */
export const sleeperAgent = defineAgent({
  name: 'bench-sleeper',
  instructions: 'Look, then decide when to look again.',
  model: 'openai:bench-sleeper',
});

const worker = await createWorker({
  agents: [sleeperAgent],
  taskQueue: process.env.KEEL_TASK_QUEUE,
  providers: { openai: { apiKey: 'bench', baseURL: `${server}/v1` } },
  // A sleeping monitor needs nothing from the worker: past this many, the least recently used
  // runs are evicted, and a wake replays the run's history.
  workerOptions: { maxCachedWorkflows: Number(process.env.BENCH_MAX_CACHED ?? 1000) },
});

const report = () => {
  const { rss, heapUsed } = process.memoryUsage();
  process.stdout.write(`rss ${rss} heap ${heapUsed} cached ${worker.worker.getStatus().numCachedWorkflows}\n`);
};
const ticker = setInterval(report, 1000);
process.stdout.write(`ready ${process.pid}\n`);
report();
try {
  await worker.run();
} finally {
  clearInterval(ticker);
}
