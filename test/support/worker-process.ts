/**
 * A keel worker in a process of its own, for tests that kill it. Environment:
 * TEMPORAL_ADDRESS, KEEL_TASK_QUEUE, MODEL_SERVER_URL (the scripted model server);
 * KEEL_STICKY_TIMEOUT: the sticky queue timeout, `default` for Temporal's (10 s), else 1 s.
 */
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { createWorker } from '../../src/worker.js';
import { crashAgent } from './crash-agent.js';
import { modelCrashAgent, streamCrashAgent } from './model-crash-agent.js';
import { crewOverseer, crewWatcher } from './team-agents.js';

Runtime.install({ logger: new DefaultLogger('WARN') });

const server = process.env.MODEL_SERVER_URL;
if (!server || !process.env.KEEL_TASK_QUEUE) throw new Error('MODEL_SERVER_URL and KEEL_TASK_QUEUE must be set');

const worker = await createWorker({
  agents: [crashAgent, modelCrashAgent, streamCrashAgent, crewOverseer, crewWatcher],
  taskQueue: process.env.KEEL_TASK_QUEUE,
  providers: { openai: { apiKey: 'test-key', baseURL: `${server}/v1` } },
  // The run's next workflow task waits this long for the dead worker before any worker may take it.
  ...(process.env.KEEL_STICKY_TIMEOUT !== 'default' && { workerOptions: { stickyQueueScheduleToStartTimeout: '1s' } }),
});
process.stdout.write('worker ready\n');
await worker.run();
